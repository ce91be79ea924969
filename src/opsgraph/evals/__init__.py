"""The eval suite behind `opsgraph eval` (docs/evals.md).

Cases (YAML) describe what a good run does; each run's events are parsed into a
`RunRecord` and scored by eight pure evaluators, one per dimension.

    cases.py        the case format and loader        records.py   events → RunRecord
    matching.py     forgiving argument matching       figures.py   checkable statements
    structure.py    plan_valid, routing, dependencies
    actions.py      tool_choice, interrupts, preview  answers.py   groundedness, pii
    evaluators.py   the eight by name
"""

from opsgraph.evals.cases import Case, default_dataset, load_cases
from opsgraph.evals.evaluators import EVALUATORS, score_case
from opsgraph.evals.records import RunRecord, parse_events
from opsgraph.evals.scores import DIMENSIONS, Score

__all__ = [
    "DIMENSIONS",
    "EVALUATORS",
    "Case",
    "RunRecord",
    "Score",
    "default_dataset",
    "load_cases",
    "parse_events",
    "score_case",
]
