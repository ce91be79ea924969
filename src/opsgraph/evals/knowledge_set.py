"""The knowledge question set: its YAML format as pydantic models, and its loader.

A knowledge set is a file whose top-level key is `knowledge_questions` (the assistant
suite's files have `cases`), or a folder of such files. Anything malformed is `BadInput`
naming the file, the question id (or index) and the field. Whether each `sources` section
exists is checked against a tenant's knowledge base by `missing_sources`, since only the
store knows the section ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from opsgraph.errors import BadInput
from opsgraph.evals.cases import SPLITS, Split, Turn
from opsgraph.yaml_text import load_yaml

KEY = "knowledge_questions"
Kind = Literal["direct", "confusable", "follow_up", "unanswerable"]
KINDS: tuple[str, ...] = ("direct", "confusable", "follow_up", "unanswerable")


class Question(BaseModel):
    """One question, the facts a right answer holds and the sections that hold them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    split: Split
    kind: Kind
    question: str = Field(min_length=1)
    history: tuple[Turn, ...] = ()
    facts: tuple[str | tuple[str, ...], ...] = ()
    forbidden: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    file: str = ""

    @model_validator(mode="after")
    def _consistent(self) -> Question:
        if self.kind == "unanswerable":
            if self.facts or self.sources:
                raise ValueError("an unanswerable question has no facts and no sources")
        elif not self.facts or not self.sources:
            raise ValueError("facts and sources: a question the base answers needs both")
        if any(not f or (not isinstance(f, str) and not all(f)) for f in self.facts):
            raise ValueError("facts: no empty fact or alternative")
        if (self.kind == "follow_up") != bool(self.history):
            raise ValueError("history: a follow_up question has earlier turns, no other does")
        if any("#" not in s for s in self.sources):
            raise ValueError("sources: section ids look like <slug>#<path>")
        return self

    @property
    def asked(self) -> list[str]:
        """What the asker said or was told: the question and every earlier turn."""
        return [t.content for t in self.history] + [self.question]


def is_knowledge_set(path: Path) -> bool:
    """Whether `path` is a knowledge set: a YAML file with the `knowledge_questions` key,
    or a folder whose YAML files all have it."""
    files = _files(path) if path.exists() else []
    return bool(files) and all(KEY in _read(f) for f in files)


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml"))
    return [path]


def _read(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise BadInput(f"{path}: cannot read: {exc}") from exc
    return data if isinstance(data, dict) else {}


def _question(path: Path, index: int, raw: Any) -> Question:
    label = raw.get("id", f"#{index}") if isinstance(raw, dict) else f"#{index}"
    if not isinstance(raw, dict):
        raise BadInput(f"{path.name}: question {label}: must be a mapping")
    try:
        return Question.model_validate({**raw, "file": path.name})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "question"
        raise BadInput(f"{path.name}: question {label}: {where}: {first['msg']}") from exc


def load_questions(path: Path, *, split: str = "all") -> list[Question]:
    """Every question of the set at `path` (file or folder), in file order, ids unique."""
    if split != "all" and split not in SPLITS:
        raise BadInput(f"split: one of all, {', '.join(SPLITS)}")
    if not path.exists():
        raise BadInput(f"{path}: no such file or folder")
    questions: list[Question] = []
    for file in _files(path):
        data = _read(file)
        if not isinstance(data.get(KEY), list):
            raise BadInput(f"{file.name}: not a knowledge set (needs a `{KEY}:` list)")
        questions += [_question(file, i, q) for i, q in enumerate(data[KEY])]
    twice = [i for i, n in Counter(q.id for q in questions).items() if n > 1]
    if twice:
        raise BadInput(f"{path}: question ids used twice: {', '.join(sorted(twice))}")
    return [q for q in questions if split == "all" or q.split == split]


def missing_sources(questions: Iterable[Question], known: Collection[str]) -> list[str]:
    """`<question id>: <section id>` for each source that is not a known section id."""
    return [f"{q.id}: {s}" for q in questions for s in q.sources if s not in known]


def kind_counts(questions: Iterable[Question]) -> dict[str, int]:
    """How many questions of each kind, every kind listed."""
    counts: Counter[str] = Counter(q.kind for q in questions)
    return {kind: counts.get(kind, 0) for kind in KINDS}


def spread(questions: list[Question], limit: int | None) -> list[Question]:
    """At most `limit` questions taken in turn from each kind (file order within a kind),
    so that a short run, or a long one stopped early, covers every kind; without a limit,
    every question in file order."""
    if limit is None:
        return questions
    if limit < 1:
        raise BadInput("--limit: must be at least 1")
    queues = {kind: [q for q in questions if q.kind == kind] for kind in KINDS}
    chosen: list[Question] = []
    while len(chosen) < min(limit, len(questions)):
        for kind in KINDS:
            if queues[kind] and len(chosen) < limit:
                chosen.append(queues[kind].pop(0))
    return chosen
