"""Which words the pre-search should search with: the planner's instruction for the task or
the person's message. Measured as recall@5 of a section that answers, on the labelled
questions (each with the instruction a planner writes for it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pymongo.database import Database

from opsgraph.engine.pre_search import search_query
from opsgraph.knowledge.search import index_for, recall_at
from opsgraph.store.scope import TenantScope

QUESTIONS = Path(__file__).parent / "data" / "search_questions.yaml"


def labelled() -> list[dict[str, Any]]:
    """The labelled questions: `q` (the message), `instruction`, `sections`."""
    data: dict[str, Any] = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    return list(data["questions"])


def test_the_instruction_recalls_at_least_as_well_as_the_message(
        demo_db: Database[dict[str, Any]]) -> None:
    index = index_for(TenantScope(demo_db, "demo"))
    questions = labelled()
    assert all(q.get("instruction") for q in questions), "every question needs an instruction"
    ways: dict[str, Callable[[dict[str, Any]], str]] = {
        "message": lambda q: str(q["q"]),
        "instruction": lambda q: str(q["instruction"]),
        "pre-search": lambda q: search_query(str(q["instruction"]), str(q["q"])),
    }
    recall = {name: recall_at(index, [(way(q), frozenset(q["sections"])) for q in questions],
                              "hybrid")
              for name, way in ways.items()}
    print(f"\nrecall@5 over {len(questions)} questions: "
          + ", ".join(f"{name} {value:.2f}" for name, value in recall.items()))
    assert recall["pre-search"] == recall["instruction"] >= recall["message"]
    assert search_query("", "  when do   you open? ") == "when do you open?"
