"""Python values in error messages spelled the R way, for the R package."""

import pytest

from pyhooks._rspelling import r_spelling, r_value


@pytest.mark.parametrize("python, r", [
    ("`every_n_step` is required, got None.", "`every_n_step` is required, got NULL."),
    ("`shuffle` must be True, False or 'auto', got 'yes'.",
     '`shuffle` must be TRUE, FALSE or "auto", got "yes".'),
    ("`metrics` must be a dict of name -> tensor, got {'a': 1.0} (dict).",
     "`metrics` must be a named list of name -> tensor, got list(a = 1) (named list)."),
    # Python's container words in prose, not in names or code
    ("`tensors` must be a dict, a list or a tensor (name), got None.",
     "`tensors` must be a named list, a list or a tensor (name), got NULL."),
    ("the dict has keys ['a'], a tuple of dicts", 'the named list has keys c("a"), a list of named lists'),
    ("feed_dict has no meaning, `dict(x=1)` stays", "feed_dict has no meaning, `dict(x=1)` stays"),
    # NumPy scalars as NumPy 2 writes them
    ("got np.str_('2.62') (str)", 'got "2.62" (character)'),
    ("got np.float64(2.5), numpy.int64(3) and np.True_", "got 2.5, 3 and TRUE"),
    ("got [1.0, 2.5] (list)", "got c(1, 2.5) (list)"),
    ("got ['a', 1] and {'my key': None, 'b': [True]}",
     'got list("a", 1) and list(`my key` = NULL, b = c(TRUE))'),
    ("got 10000000000.0, 100000.0, 123456.0, 1e-05, 2.5, nan, inf and -inf",
     "got 1e+10, 1e+05, 123456, 1e-05, 2.5, NaN, Inf and -Inf"),
    ("must be positive, got 0.0.", "must be positive, got 0."),
    ("got 3 (int), 2.5 (float), 'x' (str), True (bool)",
     'got 3 (integer), 2.5 (double), "x" (character), TRUE (logical)'),
    # code in backticks, words, indexes and apostrophes stay as they are
    ("`hooks[[1]]` (`None`) doesn't say 'x'", '`hooks[[1]]` (`None`) doesn\'t say "x"'),
    ("Nonetheless TrueType x[0] version 2.21", "Nonetheless TrueType x[0] version 2.21"),
    ("an [unclosed bracket and 'a quote", "an [unclosed bracket and 'a quote"),
])
def test_messages(python, r):
    assert r_spelling(python) == r


def test_values():
    assert r_value({"a": [1, 2], "b": "c\"d"}) == 'list(a = c(1, 2), b = "c\\"d")'
    assert r_value([]) == "list()"
    assert r_value((1, "a")) == 'list(1, "a")'
