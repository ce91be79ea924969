"""The nightly few-shot promotion: the best approved runs become worked examples.

**Scoring.** The evidence is the tenant's decided pending changes (`pending_changes`:
status, decision, edited `values` over the proposed `args`, thread, task, agent) and each
thread's checkpoint (`runner.thread_state` → `RunState`: the request, the plan, each task's
result and tool call records). A change is matched to its task's result by its change id
in the task's call records, so a thread that moved on to another message is not scored
against a later plan. A task scores:

    +1    per change approved as proposed and applied
    +0.5  per change applied after a manager's edit (its example uses the edited values)
    -1    per change rejected, or approved but failed to apply
    -1    when the task failed

A plan (the planner's example) scores the sum of its tasks and counts only when none of
its tasks scored against it. Examples with a positive score are candidates; equal examples
from several runs add up. Per tenant and agent the best `MAX_PER_AGENT` are kept (score,
then fingerprint: the same data always keeps the same ones), together with those stored
before: an example stays until better ones push it past the cap.

**Personal data** is replaced before anything is stored (`jobs.redaction.Redactor`): the
tenant's members and staff named in the text (matched as resolution matches names:
accents, case and punctuation aside, every part of a name), their record ids, e-mail
addresses and phone numbers become `<member 1>`, `<staff 1>`, `<email 1>`, `<phone 1>` —
numbered per example, so the request and its calls agree.

Idempotent: examples are keyed by tenant, agent and fingerprint (the redacted content),
so a second run the same night finds them stored and changes nothing.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypedDict

from opsgraph.engine.few_shot import COLLECTION, PLANNER, enabled, search_form
from opsgraph.engine.runner import thread_state
from opsgraph.errors import OpsgraphError
from opsgraph.jobs.redaction import People, Redactor
from opsgraph.knowledge.embeddings import get_embedder
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.scope import Document, TenantScope

__all__ = ["PromotionReport", "Redactor", "promote", "promote_few_shot"]

MAX_PER_AGENT = 20
DECIDED = ("applied", "failed", "rejected")
RECENT_CHANGES = 2000
"""Decided changes looked at per tenant and night (the newest)."""


class PromotionReport(TypedDict):
    """What one run did for one tenant."""

    enabled: bool
    runs: int
    """threads whose decided changes were scored"""
    candidates: int
    """examples with a positive score"""
    promoted: int
    """examples this run stored that were not stored before"""
    removed: int
    """stored examples past the cap of their agent (the lowest scores go)"""


@dataclass
class Candidate:
    """One example as scored: its content (redacted), score and the runs behind it."""

    agent: str
    text: str
    body: dict[str, Any]
    score: float = 0.0
    threads: set[str] = field(default_factory=set)

    @property
    def fingerprint(self) -> str:
        content = json.dumps([self.agent, self.text, self.body], sort_keys=True,
                             ensure_ascii=False, default=str)
        return hashlib.sha256(content.encode()).hexdigest()


def _system(scope: TenantScope) -> Principal:
    return Principal(scope.tenant_id, "few-shot promotion", frozenset({Role.ADMIN}),
                     Channel.API)


def change_score(change: Document) -> float:
    """What one decided change says about the task that proposed it."""
    if change["status"] == "applied":
        return 0.5 if change.get("decision") == "edit" else 1.0
    return -1.0  # rejected, or failed to apply


def _decided_by_thread(scope: TenantScope) -> dict[str, list[Document]]:
    changes = scope["pending_changes"].find(
        {"status": {"$in": list(DECIDED)}}, sort=[("created_at", -1), ("_id", 1)],
        limit=RECENT_CHANGES,
        projection={"thread_id": 1, "task_id": 1, "status": 1, "decision": 1, "args": 1,
                    "values": 1, "operation": 1})
    threads: dict[str, list[Document]] = {}
    for change in changes:
        threads.setdefault(str(change["thread_id"]), []).append(change)
    return threads


def _call_change(call: dict[str, Any]) -> str | None:
    change = call.get("change")
    return str(change["change_id"]) if isinstance(change, dict) and "change_id" in change \
        else None


def _run_candidates(scope: TenantScope, thread_id: str, changes: list[Document],
                    people: People) -> list[Candidate] | None:
    """The examples one thread's last run offers, scored; None when its checkpoint is gone
    or unreadable, or none of the changes belongs to its last run."""
    try:
        waiting, state = thread_state(_system(scope), thread_id)
    except OpsgraphError:
        return None
    if state is None or waiting or not state.plan:
        return None
    by_id = {str(c["_id"]): c for c in changes}
    redact = Redactor(scope, people)
    texts = [state.request, *(t.instruction for t in state.plan)]
    for done in state.results.values():
        texts += [json.dumps(c.get("args", {}), ensure_ascii=False) for c in done.calls]
    redact.learn(texts)
    found: list[Candidate] = []
    task_scores: list[float] = []
    matched = False
    for task in state.plan:
        result = state.results.get(task.id)
        if result is None:
            continue
        score = -1.0 if result.status == "failed" else 0.0
        calls: list[dict[str, Any]] = []
        for call in result.calls:
            change = by_id.get(_call_change(call) or "")
            if change is not None:
                matched = True
                score += change_score(change)
                args = {**change.get("args", {}), **(change.get("values") or {})}
                calls.append({"tool": call["tool"], "args": redact(args)})
            elif call.get("ok"):
                calls.append({"tool": call["tool"], "args": redact(call.get("args", {}))})
        task_scores.append(score)
        if score > 0 and result.agent and calls:
            found.append(Candidate(result.agent, redact(task.instruction), {"calls": calls},
                                   score, {thread_id}))
    if not matched:
        return None
    if task_scores and min(task_scores) >= 0 and sum(task_scores) > 0:
        plan = [{"instruction": redact(t.instruction), "capability": f"{t.domain}.{t.operation}",
                 "depends_on": [state.plan.index(d) + 1 for d in state.plan
                                if d.id in t.depends_on]} for t in state.plan]
        found.append(Candidate(PLANNER, redact(state.request), {"plan": plan},
                               sum(task_scores), {thread_id}))
    return found


def promote(scope: TenantScope, now: datetime | None = None) -> PromotionReport:
    """Score the tenant's decided runs and keep the best examples of each agent."""
    at = now if now is not None else datetime.now(UTC)
    report = PromotionReport(enabled=enabled(scope), runs=0, candidates=0, promoted=0,
                             removed=0)
    if not report["enabled"]:
        return report
    pooled: dict[tuple[str, str], Candidate] = {}
    people = People(scope)
    for thread_id, changes in sorted(_decided_by_thread(scope).items()):
        offered = _run_candidates(scope, thread_id, changes, people)
        if offered is None:
            continue
        report["runs"] += 1
        for candidate in offered:
            key = (candidate.agent, candidate.fingerprint)
            if key in pooled:
                pooled[key].score += candidate.score
                pooled[key].threads |= candidate.threads
            else:
                pooled[key] = candidate
    report["candidates"] = len(pooled)
    best: dict[str, list[Candidate]] = {}
    for candidate in sorted(pooled.values(), key=lambda c: (-c.score, c.fingerprint)):
        kept = best.setdefault(candidate.agent, [])
        if len(kept) < MAX_PER_AGENT:
            kept.append(candidate)
    report["promoted"] = _store(scope, [c for kept in best.values() for c in kept], at)
    report["removed"] = _prune(scope)
    return report


def _store(scope: TenantScope, keep: list[Candidate], now: datetime) -> int:
    """Upsert the kept examples (embedding the new ones); returns how many are new."""
    coll = scope[COLLECTION]
    stored = {(d["agent"], d["fingerprint"]) for d in coll.find(
        {}, projection={"agent": 1, "fingerprint": 1})}
    new = [c for c in keep if (c.agent, c.fingerprint) not in stored]
    vectors: list[list[float]] = []
    if new:
        texts = [search_form(c.text) for c in new]
        vectors = [[float(x) for x in row] for row in get_embedder().embed(texts)]
    embeddings = {(c.agent, c.fingerprint): v for c, v in zip(new, vectors, strict=True)}
    for c in keep:
        fields: Document = {"score": c.score, "threads": sorted(c.threads)}
        on_insert: Document = {"text": c.text, **c.body, "promoted_at": now}
        if (c.agent, c.fingerprint) in embeddings:
            on_insert["embedding"] = embeddings[(c.agent, c.fingerprint)]
        current = coll.find_one({"agent": c.agent, "fingerprint": c.fingerprint},
                                projection={"score": 1, "threads": 1})
        if current is not None and all(current.get(k) == v for k, v in fields.items()):
            continue  # nothing new since the last run
        coll.update_one({"agent": c.agent, "fingerprint": c.fingerprint},
                        {"$set": {**fields, "updated_at": now}, "$setOnInsert": on_insert},
                        upsert=True)
    return len(new)


def _prune(scope: TenantScope) -> int:
    """Keep the best `MAX_PER_AGENT` stored examples of each agent; returns how many went."""
    coll = scope[COLLECTION]
    seen: dict[str, int] = {}
    gone = []
    for doc in coll.find({}, sort=[("agent", 1), ("score", -1), ("fingerprint", 1)],
                         projection={"agent": 1}):
        seen[doc["agent"]] = seen.get(doc["agent"], 0) + 1
        if seen[doc["agent"]] > MAX_PER_AGENT:
            gone.append(doc["_id"])
    for doc_id in gone:
        coll.delete_one({"_id": doc_id})
    return len(gone)


def promote_few_shot(scopes: list[TenantScope], now: datetime | None = None,
                     ) -> dict[str, Any]:
    """The job over these tenants: `{tenant: PromotionReport}`."""
    return {scope.tenant_id: promote(scope, now) for scope in scopes}
