"""The knowledge question set: its size and kinds, that every source section exists in
the demo knowledge base and holds the facts, and the loader's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from opsgraph.errors import BadInput
from opsgraph.evals.knowledge_set import (
    is_knowledge_set,
    kind_counts,
    load_questions,
    missing_sources,
    spread,
)
from opsgraph.knowledge.documents import sections
from opsgraph.knowledge.figures import contains

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT / "evals" / "datasets" / "knowledge"
DEMO = ROOT / "src" / "opsgraph" / "store" / "demo" / "knowledge"


def demo_sections() -> dict[str, str]:
    """Every section of the demo documents: id → heading and text."""
    return {s.id: f"{s.title}\n{s.text}" for p in sorted(DEMO.glob("*.md"))
            for s in sections(p.stem, p.read_text(encoding="utf-8"))}


def test_the_set_has_60_questions_of_every_kind_in_both_splits() -> None:
    questions = load_questions(DATASET)
    counts = kind_counts(questions)
    assert len(questions) >= 60, counts
    assert counts["confusable"] >= 10 and counts["follow_up"] >= 8, counts
    assert counts["unanswerable"] >= 10, counts
    assert {q.split for q in questions} == {"dev", "heldout"}
    assert is_knowledge_set(DATASET) and not is_knowledge_set(DATASET.parent / "assistant")


def test_every_source_exists_and_holds_the_facts() -> None:
    questions, text = load_questions(DATASET), demo_sections()
    assert not missing_sources(questions, text), missing_sources(questions, text)
    for q in questions:
        read = "\n".join(text[s] for s in q.sources)
        for fact in q.facts:
            alternatives = [fact] if isinstance(fact, str) else fact
            assert any(contains(read, a) for a in alternatives), (q.id, fact)
        # what a right answer must not say, its own sources do not say either
        assert not [f for f in q.forbidden if contains(read, f) and not any(
            contains(f, a) for fact in q.facts for a in ([fact] if isinstance(fact, str)
                                                         else fact))], q.id


def test_a_missing_section_is_named() -> None:
    questions = load_questions(DATASET)
    known = set(demo_sections()) - {"booking-policy#cancelling-a-booking"}
    assert "confusable-03: booking-policy#cancelling-a-booking" in missing_sources(
        questions, known)


def test_spread_takes_every_kind_in_turn() -> None:
    questions = load_questions(DATASET)
    assert [q.kind for q in spread(questions, 5)] == [
        "direct", "confusable", "follow_up", "unanswerable", "direct"]
    assert spread(questions, None) == questions
    everything = spread(questions, 1000)
    assert sorted(q.id for q in everything) == sorted(q.id for q in questions)
    assert [q.kind for q in everything[:4]] == ["direct", "confusable", "follow_up",
                                                "unanswerable"]
    with pytest.raises(BadInput, match="--limit"):
        spread(questions, 0)


@pytest.mark.parametrize(("body", "message"), [
    ("cases: []\n", "not a knowledge set"),
    ("knowledge_questions:\n  - {id: q1, split: dev, kind: direct, question: hi}\n",
     "q1: .*facts and sources"),
    ("knowledge_questions:\n  - {id: q1, split: dev, kind: unanswerable, question: hi, "
     "facts: ['£5']}\n", "q1: .*no facts"),
    ("knowledge_questions:\n  - {id: q1, split: dev, kind: follow_up, question: 'and?', "
     "facts: [x], sources: ['a#b']}\n", "q1: .*history"),
    ("knowledge_questions:\n  - {id: q1, split: test, kind: direct, question: hi, "
     "facts: [x], sources: ['a#b']}\n", "q1: split"),
    ("knowledge_questions:\n  - {id: q1, split: dev, kind: direct, question: hi, "
     "facts: [x], sources: [nohash]}\n", "q1: .*slug"),
])
def test_malformed_questions_name_the_file_question_and_field(
        tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(BadInput, match=f"bad.yaml: .*{message}"):
        load_questions(path)


def test_a_question_id_used_twice_is_refused(tmp_path: Path) -> None:
    one = "  - {id: q1, split: dev, kind: unanswerable, question: hi}\n"
    (tmp_path / "a.yaml").write_text("knowledge_questions:\n" + one, encoding="utf-8")
    (tmp_path / "b.yaml").write_text("knowledge_questions:\n" + one, encoding="utf-8")
    with pytest.raises(BadInput, match="used twice: q1"):
        load_questions(tmp_path)
