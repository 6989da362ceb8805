"""tools/run_readme.py: README code blocks run one by one, each in a fresh process."""

import importlib.util
import pathlib
import shutil

import pytest

TOOL = pathlib.Path(__file__).resolve().parent.parent / "tools" / "run_readme.py"
spec = importlib.util.spec_from_file_location("run_readme", TOOL)
run_readme = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_readme)

DOC = """# Title

```sh
make test
```

```python
import os
print("cwd is empty:", os.listdir("."))
```

```r
cat("from R\\n")
```
"""


def test_blocks_finds_r_and_python_blocks_with_their_lines():
    found = run_readme.blocks(DOC)
    assert [(language, line) for language, line, _ in found] == [("python", 7), ("r", 12)]
    assert found[0][2].startswith("import os\n")


def test_each_block_runs_in_a_fresh_empty_directory_without_make_variables(monkeypatch):
    monkeypatch.setenv("RETICULATE_PYTHON", "/nowhere/python")
    status, output = run_readme.run_block(
        "python", "import os\nprint(os.listdir('.'), os.environ.get('RETICULATE_PYTHON'))\n")
    assert status == 0
    assert output.strip() == "['block.py'] None"
    # names defined by one block are unknown in the next
    assert run_readme.run_block("python", "x = 1\n")[0] == 0
    status, output = run_readme.run_block("python", "print(x)\n")
    assert status != 0 and "NameError" in output


def test_a_failing_block_fails_the_run(tmp_path, capsys):
    doc = tmp_path / "doc.md"
    doc.write_text("```python\nprint('fine')\n```\n\n```python\nraise SystemExit(3)\n```\n")
    assert run_readme.main([str(doc)]) == 1
    out = capsys.readouterr().out
    assert f"{doc}:1 (python) ok" in out
    assert f"{doc}:5 (python) FAILED (exit status 3)" in out
    assert "   | raise SystemExit(3)" in out


def test_a_document_without_blocks_fails(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("# nothing to run\n")
    assert run_readme.main([str(doc)]) == 1


@pytest.mark.skipif(shutil.which("Rscript") is None, reason="R is not installed")
def test_r_blocks_run_with_rscript():
    status, output = run_readme.run_block("r", "cat(R.version$major, '\\n'); quit(status = 0)\n")
    assert status == 0 and output.strip().isdigit()
    assert run_readme.run_block("r", "stop('broken')\n")[0] != 0
