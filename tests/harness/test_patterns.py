"""Tenants' patterns run on RE2 (issue 18, finding 1): a nested quantifier that takes `re`
exponential time matches in linear time; what RE2 cannot run is refused saying why; Python's
Unicode classes keep their meaning."""

from __future__ import annotations

import pytest

from opsgraph.harness import patterns


@pytest.mark.timeout(60)
def test_a_catastrophic_pattern_runs_in_linear_time() -> None:
    # Under `re` 30 characters of this take minutes; 8,000 (the longest message) never end.
    hostile = "a" * 7999 + "!"
    assert not patterns.search("(a+)+$", hostile, ignore_case=True)
    assert not patterns.search("^(a|aa)+$", hostile, ignore_case=False)
    assert patterns.search("(a+)+$", "a" * 8000, ignore_case=True)


@pytest.mark.parametrize(("pattern", "why"), [
    (r"(a)\1", "backreference"),
    (r"(?P<x>a)(?P=x)", "backreference"),
    (r"x(?=y)", "lookahead"),
    (r"x(?!y)", "negative lookahead"),
    (r"(?<=a)b", "lookbehind"),
    (r"(?<!a)b", "negative lookbehind"),
    (r"(?>a+)b", "atomic group"),
    (r"end\Z", "\\z"),
    (r"[\W_]+", "[^\\pL\\pN]"),
])
def test_what_re2_cannot_run_is_refused_saying_why(pattern: str, why: str) -> None:
    problem = patterns.problem(pattern)
    assert problem is not None and "RE2 cannot run it" in problem and why in problem
    with pytest.raises(patterns.PatternError):
        patterns.search(pattern, "text", ignore_case=True)


def test_a_pattern_that_is_no_regex_at_all_says_so() -> None:
    assert (patterns.problem("(unclosed") or "").startswith("not a regular expression")


@pytest.mark.parametrize(("pattern", "text", "found"), [
    (r"^\W*$", "!!! ???", True),
    (r"^\W*$", "Привет", False),  # a message in Cyrillic is words, not spam
    (r"^\W*$", "日本語", False),
    (r"\d", "٣", True),
    (r"\s", "a\u00a0b", True),
    (r"^[\w-]+$", "café-bar", True),
    (r"\bINJUR", "I have an injury", True),  # case ignored
    (r"\pL+", "Ω", True),
    (r"hours?$", "hours\n", False),  # RE2's `$` is the end of the text
])
def test_patterns_mean_what_they_meant_in_python(pattern: str, text: str,
                                                 found: bool) -> None:
    assert patterns.problem(pattern) is None
    assert patterns.search(pattern, text, ignore_case=True) is found


def test_case_is_ignored_only_when_asked() -> None:
    assert patterns.search("Spam", "spam", ignore_case=True)
    assert not patterns.search("Spam", "spam", ignore_case=False)


def test_a_pattern_is_compiled_once() -> None:
    first = patterns.compile_pattern(r"\bcasino\b", ignore_case=True)
    assert patterns.compile_pattern(r"\bcasino\b", ignore_case=True) is first
