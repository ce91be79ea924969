"""A report for people: the terminal summary and `report.md`."""

from __future__ import annotations

from typing import Any

from opsgraph.evals.cases import SPLITS
from opsgraph.evals.scores import DIMENSIONS

TEXT_FAILURES = 40
"""How many failures the terminal summary lists (report.md lists them all)."""


def pct(score: float | None) -> str:
    """A score as a percentage; `–` when no case applied."""
    return "–" if score is None else f"{100 * score:.1f}%"


def cell(text: Any) -> str:
    """Text safe inside a Markdown table cell."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _split_score(report: dict[str, Any], split: str, name: str) -> str:
    part = report["splits"].get(split)
    return pct(part["dimensions"][name]["score"]) if part else "–"


def failures(report: dict[str, Any]) -> list[tuple[dict[str, Any], str, str]]:
    """(case, dimension, reason) of every failed score, in case order."""
    return [(c, name, s.get("reason") or "") for c in report["cases"]
            for name, s in c["scores"].items() if not s["passed"]]


def render_text(report: dict[str, Any]) -> str:
    """The summary `opsgraph eval` prints."""
    cost = report["cost"]
    splits = ", ".join(f"{s} {part['cases']}" for s, part in report["splits"].items())
    lines = [f"eval: {'PASSED' if report['passed'] else 'MISSED THRESHOLDS'}  "
             f"model {report['model']}  {cost['cases']} cases ({splits})"
             f"  {cost['errored']} errored",
             f"{'dimension':<14} {'score':>7} {'min':>7} {'dev':>7} {'heldout':>7}  cases"]
    for name in DIMENSIONS:
        d = report["dimensions"][name]
        lines.append(f"{name:<14} {pct(d['score']):>7} {pct(d['threshold']):>7} "
                     f"{_split_score(report, 'dev', name):>7} "
                     f"{_split_score(report, 'heldout', name):>7}  {d['cases']:>5}"
                     f"{'' if d['passed'] else '  MISSED'}")
    lines.append(f"per case: {cost['seconds_median']:.1f} s median, "
                 f"{cost['model_calls_median']:.1f} model calls median; tokens "
                 f"{cost['input_tokens']} in, {cost['output_tokens']} out")
    lines += headline_lines(report)
    fails = failures(report)
    lines += [f"  FAIL {c['id']} [{name}] {reason}" for c, name, reason in fails[:TEXT_FAILURES]]
    if len(fails) > TEXT_FAILURES:
        lines.append(f"  … and {len(fails) - TEXT_FAILURES} more failures (--report DIR "
                     "writes them all)")
    return "\n".join(lines)


def _dimension_table(report: dict[str, Any]) -> list[str]:
    out = ["| dimension | score | threshold | cases | failed | dev | heldout | result |",
           "|---|---:|---:|---:|---:|---:|---:|---|"]
    for name in DIMENSIONS:
        d = report["dimensions"][name]
        out.append(f"| {name} | {pct(d['score'])} | {pct(d['threshold'])} | {d['cases']} | "
                   f"{d['failed']} | {_split_score(report, 'dev', name)} | "
                   f"{_split_score(report, 'heldout', name)} | "
                   f"{'pass' if d['passed'] else '**missed**'} |")
    return out


HEADLINE = {"right_cards": "write requests ending in the right card (operation, target, "
                           "values)",
            "single_intent_routing": "routing of requests that ask for one thing"}


def headline_lines(report: dict[str, Any]) -> list[str]:
    """`label: k of n (x%)` for each headline figure (none in reports older than them)."""
    figures = report.get("headline") or {}
    return [f"{label}: {f['passed']} of {f['cases']} ({pct(f['passed'] / f['cases'])})"
            for key, label in HEADLINE.items() if (f := figures.get(key)) and f["cases"]]


def _cost_table(report: dict[str, Any]) -> list[str]:
    c = report["cost"]
    return ["| per case | median | mean |", "|---|---:|---:|",
            f"| seconds | {c['seconds_median']:.2f} | {c['seconds_mean']:.2f} |",
            f"| model calls | {c['model_calls_median']:.1f} | {c['model_calls_mean']:.1f} |",
            f"| input tokens | | {c['input_tokens_mean']:.0f} |",
            f"| output tokens | | {c['output_tokens_mean']:.0f} |", "",
            f"Totals: {c['input_tokens']} input and {c['output_tokens']} output tokens; "
            f"{report['wall_seconds']:.1f} s wall clock; {c['errored']} case(s) errored."]


def _case_rows(report: dict[str, Any]) -> list[str]:
    out = ["| case | split | domain | result | seconds | model calls | tokens in/out | "
           "failed |", "|---|---|---|---|---:|---:|---:|---|"]
    for c in report["cases"]:
        failed = ", ".join(n for n, s in c["scores"].items() if not s["passed"])
        result = "errored" if c["errored"] else ("pass" if c["passed"] else "**fail**")
        out.append(f"| {cell(c['id'])} | {c['split']} | {cell(c['domain'])} | {result} | "
                   f"{c['seconds']:.2f} | {c['model_calls']} | {c['input_tokens']}/"
                   f"{c['output_tokens']} | {cell(failed)} |")
    return out


def _failed_case(case: dict[str, Any]) -> list[str]:
    answer = case.get("answer") or ""
    out = [f"- `{case['id']}` ({case['split']}, {case['domain']}, "
           f"{case['principal']['role']}): {cell(case['request'])!r}"]
    if case["errored"]:
        out.append(f"  - errored: {cell(case['error'])}")
    out += [f"  - **{name}**: {cell(s.get('reason') or '')}"
            for name, s in case["scores"].items() if not s["passed"]]
    if answer:
        out.append(f"  - answer: {cell(answer if len(answer) <= 300 else answer[:299] + '…')!r}")
    return out


def render_markdown(report: dict[str, Any]) -> str:
    """`report.md`: result, dimensions (with dev and heldout), cost, failures, cases."""
    splits = ", ".join(f"{s} {report['splits'][s]['cases']}" for s in SPLITS
                       if s in report["splits"])
    out = ["# Eval report", "",
           f"Result: **{'passed' if report['passed'] else 'missed thresholds'}** · model "
           f"`{report['model']}` · {report['cost']['cases']} cases ({splits}) · split "
           f"`{report['split']}` · {report['created_at']}", "",
           "## Dimensions", "", *_dimension_table(report), "",
           *[f"- {line}" for line in headline_lines(report)],
           *([""] if headline_lines(report) else []),
           "## Time and cost", "", *_cost_table(report), ""]
    failed = [c for c in report["cases"] if not c["passed"]]
    out += [f"## Failed cases ({len(failed)})", ""]
    if not failed:
        out.append("None: every case passed every dimension that applies to it.")
    for c in failed:
        out += _failed_case(c)
    out += ["", "## Cases", "", *_case_rows(report)]
    return "\n".join(out) + "\n"
