"""Routing quality: does the ranker put the right agent first (top-1) or in the top 3?

A dataset (`evals/datasets/routing.yaml`) lists requests with the domain and verb a planner
should pick; a hit is a ranked agent of that domain whose `operations` include the verb.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from opsgraph.errors import BadInput
from opsgraph.principal import DOMAINS, VERBS
from opsgraph.registry.loader import get_registry
from opsgraph.registry.ranker import Ranked, clear_request_cache, rank_agents, warm
from opsgraph.registry.registry import Registry
from opsgraph.yaml_text import load_yaml


@dataclass(frozen=True, slots=True)
class RoutingCase:
    """One request and where it should go."""

    request: str
    domain: str
    verb: str
    who: str = ""


@dataclass(frozen=True, slots=True)
class Miss:
    """A request whose best-ranked agent was not a hit."""

    request: str
    domain: str
    verb: str
    top: list[str]
    in_top3: bool


@dataclass(frozen=True, slots=True)
class RoutingReport:
    """Top-1 and top-3 hit rates, ranker latency after warm-up, and the misses."""

    cases: int
    top1: float
    top3: float
    ms_per_request: float
    misses: list[Miss] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """JSON-able form for the ranker tests and `opsgraph bench`."""
        return asdict(self)


def load_cases(dataset_path: Path | str) -> list[RoutingCase]:
    """The cases of a routing dataset; `BadInput` names the first malformed one."""
    data = load_yaml(Path(dataset_path).read_text(encoding="utf-8"))
    raw = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise BadInput(f"{dataset_path}: cases: expected a non-empty list")
    cases = []
    for i, item in enumerate(raw):
        try:
            case = RoutingCase(**item)
        except TypeError as exc:
            raise BadInput(f"{dataset_path}: cases[{i}]: {exc}") from None
        if case.domain not in DOMAINS or case.verb not in VERBS:
            raise BadInput(f"{dataset_path}: cases[{i}]: unknown domain or verb")
        cases.append(case)
    return cases


def is_hit(ranked: Ranked, case: RoutingCase) -> bool:
    """The agent is of the expected domain and serves the expected verb."""
    return ranked.domain == case.domain and case.verb in ranked.operations


def evaluate_routing(dataset_path: Path | str, registry: Registry | None = None) -> RoutingReport:
    """Rank every case's request; report top-1, top-3, ms per request and the misses."""
    registry = registry if registry is not None else get_registry()
    cases = load_cases(dataset_path)
    warm(registry)
    clear_request_cache()  # time real embeddings, not LRU hits
    top1 = top3 = 0
    misses: list[Miss] = []
    elapsed = 0.0
    for case in cases:
        started = time.perf_counter()
        ranked = rank_agents(case.request, top_k=3, registry=registry)
        elapsed += time.perf_counter() - started
        hits = [is_hit(r, case) for r in ranked]
        top1 += bool(hits and hits[0])
        top3 += any(hits)
        if not (hits and hits[0]):
            misses.append(Miss(case.request, case.domain, case.verb,
                               [r.agent for r in ranked], any(hits)))
    n = len(cases)
    return RoutingReport(n, top1 / n, top3 / n, 1000 * elapsed / n, misses)
