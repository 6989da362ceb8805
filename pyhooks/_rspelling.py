"""Python values in an error message spelled as R prints them, for the R package.

pyhooks validates arguments in Python and its messages show values as Python
writes them (``got None``, ``True or False``, ``{'a': 1.0} (dict)``). The R
package passes every message of a Python error through :func:`r_spelling`
before showing it, so an R user reads ``got NULL``, ``TRUE or FALSE``,
``list(a = 1) (named list)``, and reads ``a named list`` where Python says
``a dict``. NumPy scalars as NumPy 2 writes them (``np.str_('2.62')``,
``np.float64(2.5)``, ``np.True_``) are spelled as the plain values. Only what
reads as a Python value or type is changed: text inside backticks (argument
names, code) is left as it is.

Example:
    >>> r_spelling("`x` must be True or False, got [1.0, 2.0] (list).")
    '`x` must be TRUE or FALSE, got c(1, 2) (list).'
"""

from __future__ import annotations

import ast
import math
import re

__all__ = ["r_spelling", "r_value"]

_WORDS = {"None": "NULL", "True": "TRUE", "False": "FALSE", "nan": "NaN", "inf": "Inf",
          "-inf": "-Inf"}
_TYPES = {"NoneType": "NULL", "bool": "logical", "int": "integer", "float": "double",
          "str": "character", "dict": "named list", "tuple": "list", "list": "list"}
_TOKEN = re.compile(
    r"(?P<word>(?<![\w.])(?:None|True|False|-?inf|nan)(?![\w(]))"
    r"|(?P<type>\((?:NoneType|bool|int|float|str|dict|tuple|list)\))"
    r"|(?P<kind>(?<![\w.`])(?:dicts?|tuples?)(?![\w(]))"
    r"|(?P<float>(?<![\w.])-?\d+\.\d+(?:e[+-]\d+)?(?![\w]|\.\d))")
# Python's container words in prose ("a dict of columns"), as R calls them
_KINDS = {"dict": "named list", "dicts": "named lists", "tuple": "list", "tuples": "lists"}
# NumPy scalars as NumPy 2 writes them: np.str_('2.62'), np.float64(2.5), np.True_
_NUMPY_SCALAR = re.compile(r"(?<![\w.])(?:np|numpy)\.(?:str_|bytes_|u?int(?:8|16|32|64)|"
                           r"float(?:16|32|64)|bool_?)\((?P<inner>[^()]*)\)")
_NUMPY_BOOL = re.compile(r"(?<![\w.])(?:np|numpy)\.(?P<value>True|False)_")
_SYNTACTIC = re.compile(r"^(?:[A-Za-z]|\.(?![0-9]))[A-Za-z0-9._]*$")
_OPEN = {"[": "]", "{": "}", "(": ")"}


def _number(value):
    """A float as R prints it (7 significant digits are not applied: the full value)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        fixed = str(int(value))
        mantissa, _, exponent = f"{value:.15e}".partition("e")
        mantissa = mantissa.rstrip("0").rstrip(".")
        sci = f"{mantissa}e{exponent[0]}{int(exponent[1:]):02d}"
        return fixed if len(fixed) <= len(sci) else sci
    text = repr(value)
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa}e{sign}{int(exponent.lstrip('+-')):02d}"
    return text


def _string(value):
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _name(key):
    key = key if isinstance(key, str) else r_value(key)
    return key if _SYNTACTIC.match(key) else f"`{key}`"


def r_value(value):
    """``value`` (a Python literal: None, bools, numbers, strings, lists, dicts) in R syntax."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        return "list(" + ", ".join(f"{_name(k)} = {r_value(v)}" for k, v in value.items()) + ")"
    if isinstance(value, (list, tuple, set, frozenset)):
        items = list(value)
        kinds = {bool if isinstance(v, bool) else (float if isinstance(v, (int, float)) else
                                                   type(v)) for v in items}
        atomic = len(kinds) == 1 and kinds <= {bool, float, str}
        inner = ", ".join(r_value(v) for v in items)
        return f"c({inner})" if items and atomic else f"list({inner})"
    return repr(value)


def _literal_end(text, start):
    """The end of the bracketed span opening at ``start`` (quotes respected), or None."""
    stack, i, quote = [], start, None
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\":
                i += 1
            elif char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char in _OPEN:
            stack.append(_OPEN[char])
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return i + 1
        i += 1
    return None


def _spell_plain(text):
    """Words, type names and floats of text holding no literal."""
    def replace(match):
        if match.group("word"):
            return _WORDS[match.group("word")]
        if match.group("type"):
            return f"({_TYPES[match.group('type')[1:-1]]})"
        if match.group("kind"):
            kind = match.group("kind")
            # "a dict" -> "a named list" (the article before agrees with the word)
            return _KINDS[kind]
        return _number(float(match.group("float")))
    return _TOKEN.sub(replace, text)


def r_spelling(message):
    """``message`` with the Python values it shows spelled as R would (see the module)."""
    if not isinstance(message, str):
        return message
    message = _NUMPY_BOOL.sub(lambda m: m.group("value"), message)
    message = _NUMPY_SCALAR.sub(lambda m: m.group("inner"), message)
    out, plain, i = [], [], 0

    def flush():
        if plain:
            out.append(_spell_plain("".join(plain)))
            plain.clear()

    while i < len(message):
        char = message[i]
        if char == "`":  # code: as it is
            end = message.find("`", i + 1)
            if end < 0:
                plain.append(message[i:])
                break
            flush()
            out.append(message[i:end + 1])
            i = end + 1
            continue
        before = message[i - 1] if i else " "
        if char in "[{'\"" and not (before.isalnum() or before in "_]`"):
            end = (_literal_end(message, i) if char in "[{"
                   else _quoted_end(message, i))
            if end is not None:
                try:
                    value = ast.literal_eval(message[i:end])
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    value = _FAILED
                if value is not _FAILED:
                    flush()
                    out.append(r_value(value))
                    i = end
                    continue
        plain.append(char)
        i += 1
    flush()
    return "".join(out)


_FAILED = object()


def _quoted_end(text, start):
    """The end of a quoted string at ``start`` followed by no letter (not an apostrophe)."""
    quote, i = text[start], start + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            after = text[i + 1] if i + 1 < len(text) else " "
            return i + 1 if not after.isalnum() else None
        i += 1
    return None
