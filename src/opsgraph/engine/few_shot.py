"""Few-shot guidance: the tenant's promoted worked examples closest to a request.

The nightly promotion (`opsgraph.jobs.few_shot`) stores, per tenant and agent, worked
examples of runs managers approved, free of personal data: for the planner (agent
`planner`) a request and its plan, for an agent a task and the tool calls that did it.
Here the planner and each agent get the closest ones by embedding similarity (MiniLM, the
cached ONNX model the ranker uses; an example is embedded in its `search_form`) as a short
block of their prompt: at most
`MAX_SHOWN` examples at or above `MIN_SIMILARITY`, each cut to `MAX_CHARS` characters,
and nothing at all — no embedding either — when the tenant has no example for that agent.

Switched off for every tenant by `OPSGRAPH_FEW_SHOT=off`, and for one tenant by
`few_shot: false` on its tenants document: then nothing is promoted and nothing is shown.

Documents (`few_shot_examples`, unique per tenant, agent and fingerprint): `{_id,
tenant_id, agent, fingerprint, text, plan? | calls?, score, threads, embedding,
promoted_at, updated_at}`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection

from opsgraph.knowledge.embeddings import get_embedder
from opsgraph.settings import get_settings
from opsgraph.store.scope import Document, TenantScope

COLLECTION = "few_shot_examples"
PLANNER = "planner"
"""The agent name of the planner's examples (request → plan)."""
MAX_SHOWN = 2
MIN_SIMILARITY = 0.45
"""Cosine similarity of MiniLM vectors: a request of the same kind scores about 0.5 against
an example's search form, unrelated ones below 0.3."""
MAX_CHARS = 600
"""Of one example as shown (about 150 tokens): two stay within a few hundred tokens."""
CANDIDATES = 50
"""Examples compared per call (the best scored; the job keeps fewer per agent anyway)."""


_PLACEHOLDER = re.compile(r"<(member|staff|email|phone) \d+>")
_KIND_WORDS = {"member": "member", "staff": "staff member", "email": "email address",
               "phone": "phone number"}


def search_form(text: str) -> str:
    """The text an example is embedded as: placeholders read as what they stand for
    (`<member 1>` → member), since a bare placeholder pulls the vector away from requests."""
    return _PLACEHOLDER.sub(lambda m: _KIND_WORDS[m.group(1)], text)


def enabled(scope: TenantScope) -> bool:
    """Whether few-shot examples are on for the scope's tenant (deployment and tenant)."""
    return get_settings().few_shot and (scope.tenant() or {}).get("few_shot") is not False


def agents_with_examples(scope: TenantScope) -> frozenset[str]:
    """The agents (and `PLANNER`) the tenant has worked examples for: one read, so that a
    run asks for the examples of those alone (most tenants have none for most agents)."""
    return frozenset(str(a) for a in scope[COLLECTION].distinct("agent"))


def closest(scope: TenantScope, agent: str, text: str, k: int = MAX_SHOWN,
            agents: Collection[str] | None = None) -> list[Document]:
    """The tenant's examples for `agent` most similar to `text` (best first, at most `k`,
    each at least `MIN_SIMILARITY`); empty without a single embedding when there are none.
    `agents`: those with examples (`agents_with_examples`), when the caller knows: for any
    other agent, no read either."""
    if agents is not None and agent not in agents:
        return []
    docs = list(scope[COLLECTION].find({"agent": agent}, sort=[("score", -1), ("_id", 1)],
                                       limit=CANDIDATES, projection={"threads": 0}))
    if not docs or not enabled(scope):
        return []
    import numpy as np  # heavy: numpy (cold start)

    query = get_embedder().embed_query(text)
    scored = [(float(np.dot(query, np.asarray(d["embedding"], dtype=np.float32))), d)
              for d in docs if isinstance(d.get("embedding"), list)]
    best = sorted((s for s in scored if s[0] >= MIN_SIMILARITY),
                  key=lambda s: (-s[0], str(s[1].get("fingerprint"))))
    return [doc for _, doc in best[:k]]


def _cut(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 1] + "…"


def _plan_line(example: Document) -> str:
    tasks = [{"instruction": t.get("instruction", ""), "capability": t.get("capability", ""),
              "depends_on": t.get("depends_on", [])} for t in example.get("plan") or []]
    return _cut(f"Request: {example['text']}\nPlan: "
                + json.dumps({"tasks": tasks}, ensure_ascii=False))


def _calls_line(example: Document) -> str:
    calls = "; ".join(f"{c['tool']}({json.dumps(c.get('args', {}), ensure_ascii=False)})"
                      for c in example.get("calls") or [])
    return _cut(f"Task: {example['text']}\nCalls: {calls}")


def planner_examples(scope: TenantScope, request: str,
                     agents: Collection[str] | None = None) -> str:
    """The planner prompt's block of worked examples for `request` ('' when none; `agents`
    as `closest` takes them)."""
    found = closest(scope, PLANNER, request, agents=agents)
    if not found:
        return ""
    return ("Worked examples of similar requests a manager approved here (placeholders "
            "stand for people):\n" + "\n".join(_plan_line(e) for e in found) + "\n\n")


def agent_examples(scope: TenantScope, agent: str | None, instruction: str,
                   agents: Collection[str] | None = None) -> list[str]:
    """The lines of an agent's brief with worked examples for its task (none when none;
    `agents` as `closest` takes them)."""
    found = closest(scope, agent, instruction, agents=agents) if agent else []
    if not found:
        return []
    return ["", "Worked examples of similar tasks a manager approved here (placeholders "
                "stand for people; use the names of your own task):",
            *(_calls_line(e) for e in found)]
