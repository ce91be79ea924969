"""Streamed answers stored as a few `token` events, not one per sentence: the first
sentence goes out as soon as it is whole, what becomes whole within the window after it
goes out together, and replaying the stored events gives the answer, in order."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from opsgraph.engine.synthesise import sentence_batches
from tests.engine.helpers import chat, of, person
from tests.engine.test_supervisor import call, task

SENTENCES = ["Emily Chen is a junior member. ", "She joined in 2023. ",
             "Her next booking is on Friday. ", "Cancellations need 24 hours notice."]


def words(text: str) -> Iterator[str]:
    """The text in word-sized chunks, as a model streams it."""
    for word in text.split(" "):
        yield word + " "


def test_the_first_sentence_goes_out_alone_and_the_rest_within_the_window_together() -> None:
    batches = list(sentence_batches(words("".join(SENTENCES)), window_s=3600))
    assert batches[0] == [SENTENCES[0]]
    assert len(batches) == 2
    assert "".join(s for b in batches for s in b).strip() == "".join(SENTENCES).strip()


def test_with_no_window_every_sentence_is_a_batch() -> None:
    batches = list(sentence_batches(words("".join(SENTENCES)), window_s=0))
    assert [len(b) for b in batches] == [1, 1, 1, 1]


@pytest.mark.usefixtures("demo_db")
def test_a_runs_stored_token_events_replay_its_answer(script: Any, demo_db: Any) -> None:
    model = script({
        "plan": {"tasks": [task("t1", "members", "get", "Look up Emily Chen"),
                           task("t2", "members", "get", "Look up Jane Smith")]},
        "turns": {"t1": [call("members_get", member="Emily Chen")],
                  "t2": [call("members_get", member="Jane Smith")]},
        "synthesis": "".join(SENTENCES)})
    events = chat(person("staff"), "Who are Emily Chen and Jane Smith?", model,
                  thread="th-batches")
    answer = of(events, "answer")[0]["text"]
    live = [d["text"] for d in of(events, "token")]
    stored = [d["data"]["text"] for d in demo_db["thread_events"].find(
        {"tenant_id": "demo", "thread_id": "th-batches", "event": "token"}, sort=[("seq", 1)])]
    assert stored == live and "".join(stored) == answer
    assert live[0] == SENTENCES[0]  # the first sentence is not held back
    assert 1 <= len(stored) <= len(SENTENCES)
