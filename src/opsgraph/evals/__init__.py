"""The eval suite behind `opsgraph eval` (docs/evals.md).

Cases (YAML) run through the real supervisor graph in a scratch database; each run's
events are parsed into a `RunRecord` and scored by eight pure evaluators; the report
compares every dimension with its threshold, overall and per split. Two reports can be
compared side by side, and their answers judged blind by a model.

    cases.py        the case format and loader        records.py   events → RunRecord
    matching.py     forgiving argument matching       figures.py   checkable statements
    structure.py    plan_valid, routing, dependencies
    actions.py      tool_choice, interrupts, preview  answers.py   groundedness, pii
    evaluators.py   the eight by name                 run.py       cases → results
    sandbox.py      the scratch database              lookups.py   store facts for scoring
    report.py       report.json                       render.py    text and report.md
    compare.py      --compare                         judge.py     --judge
"""

from opsgraph.evals.cases import Case, default_dataset, load_cases
from opsgraph.evals.compare import compare_reports, render_compare
from opsgraph.evals.evaluators import EVALUATORS, score_case
from opsgraph.evals.judge import judge_reports, render_judgement
from opsgraph.evals.records import RunRecord, parse_events
from opsgraph.evals.render import render_markdown, render_text
from opsgraph.evals.report import build_report, read_report, write_report
from opsgraph.evals.scores import DIMENSIONS, Score
from opsgraph.evals.suite import run_suite

__all__ = [
    "DIMENSIONS",
    "EVALUATORS",
    "Case",
    "RunRecord",
    "Score",
    "build_report",
    "compare_reports",
    "default_dataset",
    "judge_reports",
    "load_cases",
    "parse_events",
    "read_report",
    "render_compare",
    "render_judgement",
    "render_markdown",
    "render_text",
    "run_suite",
    "score_case",
    "write_report",
]
