"""Tenant-supplied regular expressions, run in linear time on RE2.

A harness's guard patterns, `matches` conditions and tests' `regex` are written by a
tenant and meet text anyone may send. A backtracking engine (`re`) takes exponential time
on a pattern like `(a+)+$` and holds the interpreter meanwhile, so one tenant's pattern
would freeze every tenant. RE2 (`google-re2`) matches in time linear in the text; it has no
backreferences, lookarounds or possessive quantifiers, and validation refuses a pattern
that uses them, saying why.

Python's `\\w`, `\\d`, `\\s` and their negations match Unicode text; RE2's match ASCII. They
are rewritten to Unicode classes, so `^\\W*$` does not take a message in Greek for spam.
`\\b` and `\\B` keep RE2's ASCII meaning (RE2 has no Unicode word boundary).

Patterns are compiled once per process and pattern (a harness version's patterns are
compiled on first use and reused by every run of it).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import re2

_WORD = r"\p{L}\p{N}_"
_SPACE = r"\t\n\v\f\r\x{1c}-\x{1f}\x{85}\p{Z}"
_DIGIT = r"\p{Nd}"
_OUTSIDE = {"w": f"[{_WORD}]", "W": f"[^{_WORD}]", "d": _DIGIT, "D": r"\P{Nd}",
            "s": f"[{_SPACE}]", "S": f"[^{_SPACE}]"}
_INSIDE = {"w": _WORD, "d": _DIGIT, "D": r"\P{Nd}", "s": _SPACE}
_UNSUPPORTED = (
    ("(?=", "a lookahead"), ("(?!", "a negative lookahead"), ("(?<=", "a lookbehind"),
    ("(?<!", "a negative lookbehind"), ("(?>", "an atomic group"), ("(?P=", "a backreference"))


class PatternError(ValueError):
    """A pattern RE2 cannot run; the message says why."""


def _unicode_classes(pattern: str) -> str:
    """`pattern` with Python's Unicode class escapes spelled as RE2 Unicode classes."""
    out: list[str] = []
    i, in_class, class_body = 0, False, 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            escape = pattern[i + 1]
            if escape.isdigit() and escape != "0":
                raise PatternError(f"\\{escape} is a backreference")
            if in_class and escape in "WS":
                raise PatternError(f"\\{escape} inside [...] has no Unicode form: write the "
                                   "class negated (e.g. [^\\pL\\pN] for [\\W_])")
            table = _INSIDE if in_class else _OUTSIDE
            out.append(table.get(escape, pattern[i:i + 2]))
            i, class_body = i + 2, class_body + 1
            continue
        if in_class:
            if c == "[" and pattern.startswith("[:", i):  # a POSIX class: [:alpha:]
                end = pattern.find(":]", i + 2)
                if end != -1:
                    out.append(pattern[i:end + 2])
                    i, class_body = end + 2, class_body + 1
                    continue
            if c == "]" and class_body > 0:
                in_class = False
            elif not (c == "^" and class_body == 0 and out[-1] == "["):
                class_body += 1
        elif c == "[":
            in_class, class_body = True, 0
        out.append(c)
        i += 1
    return "".join(out)


def _why_not(pattern: str, error: Exception) -> str:
    for opener, what in _UNSUPPORTED:
        if opener in pattern:
            return f"it uses {what}"
    detail = error.args[0] if error.args else error
    text = detail.decode(errors="replace") if isinstance(detail, bytes) else str(detail)
    return text + (" (write \\z for the end of the text)" if "\\Z" in pattern else "")


@lru_cache(maxsize=4096)
def compile_pattern(pattern: str, *, ignore_case: bool) -> Any:
    """The compiled RE2 pattern; `PatternError` saying why RE2 cannot run it."""
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.log_errors = False
    try:
        return re2.compile(_unicode_classes(pattern), options)
    except re2.error as exc:
        raise PatternError(_why_not(pattern, exc)) from None


def problem(pattern: str) -> str | None:
    """Why `pattern` cannot be used (None when it can), for a validation message."""
    try:
        compile_pattern(pattern, ignore_case=False)
    except PatternError as exc:
        try:
            re.compile(pattern)
        except re.error as not_regex:
            return f"not a regular expression: {not_regex}"
        return ("RE2 cannot run it (patterns run in linear time, without backreferences or "
                f"lookarounds): {exc}")
    return None


def search(pattern: str, text: str, *, ignore_case: bool) -> bool:
    """Whether `pattern` matches somewhere in `text` (linear in the text)."""
    return compile_pattern(pattern, ignore_case=ignore_case).search(text) is not None
