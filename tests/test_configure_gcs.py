import json
import logging
import os
import pickle
import stat

import pytest

from loss_graph import regression_graph, session, train
from pyhooks import SessionRunHook
from pyhooks.hooks.configure_gcs import BlockCacheParams, ConfigureGcsHook

SECRET = "s3cr3t-refresh-token-XYZ"
KEY = "-----BEGIN PRIVATE KEY-----abc"
CREDS = {"type": "authorized_user", "client_id": "cid", "client_secret": "shh-client-secret",
         "refresh_token": SECRET}
VARS = ("GOOGLE_APPLICATION_CREDENTIALS", "GCS_READ_CACHE_BLOCK_SIZE_MB",
        "GCS_READ_CACHE_MAX_SIZE_MB", "GCS_READ_CACHE_MAX_STALENESS")


@pytest.fixture
def clean_env(monkeypatch):
    for name in VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GCS_READ_CACHE_MAX_STALENESS", "7")  # a previous value to restore


class Probe(SessionRunHook):
    """Looks at the environment and the credentials file while the run is configured."""

    def after_create_session(self, session, coord):
        self.env = {name: os.environ.get(name) for name in VARS}
        path = self.env["GOOGLE_APPLICATION_CREDENTIALS"]
        if path:
            self.mode = stat.S_IMODE(os.stat(path).st_mode)
            self.dir_mode = stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)
            with open(path) as f:
                self.content = json.load(f)


@pytest.mark.parametrize("runner", ["pyhooks", "tf"])
@pytest.mark.parametrize("credentials", [CREDS, json.dumps(CREDS)])
def test_configures_during_the_run_and_restores_after(clean_env, runner, credentials):
    hook = ConfigureGcsHook(credentials=credentials,
                            block_cache=BlockCacheParams(block_size=16 * 2**20, max_staleness=30))
    probe = Probe()
    train(regression_graph(), [hook, probe], steps=1, runner=runner)
    assert probe.env["GCS_READ_CACHE_BLOCK_SIZE_MB"] == "16"
    assert probe.env["GCS_READ_CACHE_MAX_SIZE_MB"] == "32"
    assert probe.env["GCS_READ_CACHE_MAX_STALENESS"] == "30"
    assert probe.content == CREDS
    assert probe.mode == 0o600 and probe.dir_mode == 0o700
    path = probe.env["GOOGLE_APPLICATION_CREDENTIALS"]
    assert not os.path.exists(path) and not os.path.exists(os.path.dirname(path))
    assert {name: os.environ.get(name) for name in VARS} == {
        "GOOGLE_APPLICATION_CREDENTIALS": None, "GCS_READ_CACHE_BLOCK_SIZE_MB": None,
        "GCS_READ_CACHE_MAX_SIZE_MB": None, "GCS_READ_CACHE_MAX_STALENESS": "7"}
    assert hook.credentials_path is None


def test_cleans_up_after_an_error(clean_env, monkeypatch):
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", "/previous/creds.json")
    hook, probe = ConfigureGcsHook(credentials=CREDS), Probe()
    ns = regression_graph()
    with pytest.raises(ZeroDivisionError), ns.graph.as_default(), session([hook, probe]):
        1 / 0
    path = probe.env["GOOGLE_APPLICATION_CREDENTIALS"]
    assert path != "/previous/creds.json" and not os.path.exists(os.path.dirname(path))
    assert os.environ["GOOGLE_APPLICATION_CREDENTIALS"] == "/previous/creds.json"


def test_block_cache_only_sets_no_credentials(clean_env):
    probe = Probe()
    train(regression_graph(), [ConfigureGcsHook(block_cache=BlockCacheParams()), probe], steps=1)
    assert probe.env == {"GOOGLE_APPLICATION_CREDENTIALS": None,
                         "GCS_READ_CACHE_BLOCK_SIZE_MB": "128", "GCS_READ_CACHE_MAX_SIZE_MB": "256",
                         "GCS_READ_CACHE_MAX_STALENESS": "0"}


def test_no_file_io_at_construction(clean_env, tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    ConfigureGcsHook(credentials=CREDS)
    assert list(tmp_path.iterdir()) == []
    assert "GOOGLE_APPLICATION_CREDENTIALS" not in os.environ


def test_repr_of_a_half_built_hook():
    hook = ConfigureGcsHook.__new__(ConfigureGcsHook)
    assert repr(hook) == "ConfigureGcsHook(credentials=None, block_cache=None)"
    with pytest.raises(ValueError, match="block_cache must be an instance of BlockCacheParams"):
        hook.__init__(credentials={"private_key": KEY}, block_cache=3)
    assert repr(hook) == "ConfigureGcsHook(credentials=<hidden>, block_cache=None)"


def test_credentials_live_in_memory_and_name_their_process(clean_env):
    hook = ConfigureGcsHook({"private_key": KEY})
    hook.after_create_session(None, None)
    try:
        directory = os.path.basename(os.path.dirname(hook.credentials_path))
        assert directory.startswith(f"pyhooks-gcs-{os.getpid()}-")
        if os.access("/dev/shm", os.W_OK):
            assert hook.credentials_path.startswith("/dev/shm/")
    finally:
        hook.end(None)


def test_secrets_never_in_repr_str_or_pickle():
    hook = ConfigureGcsHook(credentials={"private_key": KEY, "client_email": "a@b"},
                            block_cache=BlockCacheParams(max_bytes=2**30))
    for text in (repr(hook), str(hook), repr(vars(hook)), str(vars(hook))):
        assert KEY not in text and "a@b" not in text
    assert repr(hook) == ("ConfigureGcsHook(credentials=<hidden>, block_cache=BlockCacheParams("
                          "block_size=134217728, max_bytes=1073741824, max_staleness=0))")
    with pytest.raises(TypeError, match="not picklable"):
        pickle.dumps(hook)


def test_secrets_never_logged(clean_env, caplog):
    caplog.set_level(logging.DEBUG)
    train(regression_graph(), [ConfigureGcsHook(credentials=CREDS)], steps=1)
    assert SECRET not in caplog.text and "shh-client-secret" not in caplog.text


@pytest.mark.parametrize("credentials, message", [
    ('{"refresh_token": "s3cr3t-refresh-token-XYZ"',
     "credentials was not a well formed JSON string."),
    (json.dumps({"client_secret": SECRET}),
     'credentials has neither a "refresh_token" nor a "private_key" field.'),
    ({"client_secret": SECRET},
     'credentials has neither a "refresh_token" nor a "private_key" field.'),
    (json.dumps([SECRET]), 'credentials has neither a "refresh_token" nor a "private_key" field.'),
    (SECRET.encode(), "credentials is of an unknown type: bytes"),
])
def test_bad_credentials_do_not_echo_the_secret(credentials, message):
    with pytest.raises(ValueError) as info:
        ConfigureGcsHook(credentials=credentials)
    assert str(info.value) == message
    chain = [info.value, info.value.__cause__, info.value.__context__]
    assert all(SECRET not in repr(vars(e)) for e in chain if e is not None)
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_block_cache_must_be_block_cache_params():
    with pytest.raises(ValueError) as info:
        ConfigureGcsHook(block_cache={"block_size": 1})
    assert str(info.value) == "block_cache must be an instance of BlockCacheParams."


def test_block_cache_params_defaults_and_rounding():
    params = BlockCacheParams(block_size=1000, max_bytes=3 * 2**20 + 1, max_staleness=2.0)
    assert (params.block_size, params.max_bytes, params.max_staleness) == (1000, 3 * 2**20 + 1, 2)
    assert params.environment() == {"GCS_READ_CACHE_BLOCK_SIZE_MB": "1",
                                    "GCS_READ_CACHE_MAX_SIZE_MB": "4",
                                    "GCS_READ_CACHE_MAX_STALENESS": "2"}


@pytest.mark.parametrize("kwargs, error, message", [
    ({"block_size": 0}, ValueError, "`block_size` must be positive, got 0."),
    ({"max_bytes": 1.5}, ValueError, "`max_bytes` must be a whole number, got 1.5."),
    ({"max_staleness": -1}, ValueError, "`max_staleness` must be zero or more, got -1."),
    ({"block_size": "big"}, TypeError, "`block_size` must be a whole number, got 'big' (str)."),
])
def test_bad_block_cache_params(kwargs, error, message):
    with pytest.raises(error) as info:
        BlockCacheParams(**kwargs)
    assert str(info.value) == message
