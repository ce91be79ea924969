"""Case 11: stored events per answer. Every event of a run is one insert into the thread's
log (a network round trip on Atlas); a streamed answer's text is stored as `token` events
in batches (`engine.synthesise.sentence_batches`), not one per model token or sentence.

The answer here is eight sentences streamed word by word by the scripted model at 0 ms
(as fast as a model can go: the case batching is for). "Before" are the two ways of
storing it that came first, counted on the same answer: one event per streamed chunk (a
model token) and one per sentence; "after" is what the run stored.
"""

from __future__ import annotations

import uuid

from opsgraph.bench.environment import BenchEnv
from opsgraph.bench.report import Row
from opsgraph.bench.scripts import search_turn, task

SENTENCES = 8
TARGET = 0.5
"""Stored token events at most half the sentences."""


def _script() -> dict[str, object]:
    answer = " ".join(f"Member {n} of the list is on the books and paid up this month."
                      for n in range(1, SENTENCES + 1))
    return {"plan": {"tasks": [task("t1", "Find the member Jane Smith"),
                               task("t2", "Find the member Tom Baker")]},
            "turns": {"t1": [search_turn("Jane Smith", 0)],
                      "t2": [search_turn("Tom Baker", 0)]},
            "synthesis": answer}


def stored_events_row(env: BenchEnv) -> Row:
    """Token events stored for one streamed answer, against per-token and per-sentence."""
    from opsgraph.engine.runner import stream_run  # heavy: langgraph (cold start)
    from opsgraph.engine.synthesise import sentence_batches  # heavy: langgraph (cold start)

    script = _script()
    spec = env.write_script("stored-events", script)
    thread_id = f"bench-stored-events-{uuid.uuid4().hex[:8]}"
    events = list(stream_run(env.principal, "Find Jane Smith and Tom Baker",
                             thread_id=thread_id, model=spec))
    answer = str(script["synthesis"])
    per_token = len(answer.split())  # the scripted model streams a chunk per word
    per_sentence = sum(len(b) for b in sentence_batches(iter([answer]), window_s=0))
    stored = env.db["thread_events"].count_documents(
        {"tenant_id": env.principal.tenant_id, "thread_id": thread_id, "event": "token"})
    total = env.db["thread_events"].count_documents(
        {"tenant_id": env.principal.tenant_id, "thread_id": thread_id})
    live = sum(1 for e in events if e.event == "token")
    return Row(case="12", name="stored token events per streamed answer (8 sentences)",
               measured={"per_token_before": per_token, "per_sentence_before": per_sentence,
                         "after": stored, "events_per_run": total, "live_tokens": live},
               summary=f"{stored} token events (before: {per_sentence} one per sentence, "
                       f"{per_token} one per model token); {total} events in the run",
               ratio=stored / per_sentence, limit=TARGET,
               target=f"≤ {TARGET:g} × one per sentence",
               note="batches: the first sentence at once, then what became whole within "
                    "50 ms of the last batch")
