"""`examples`: requests an agent serves, each embedded as one more text the agent owns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from opsgraph.registry.loader import load_registry, validate_paths
from opsgraph.registry.operation_index import OperationIndex
from opsgraph.registry.ranker import agent_texts, agent_vectors, rank_agents
from opsgraph.registry.registry import Registry
from opsgraph.registry.spec import AgentSpec

from .conftest import SpecWriter, valid_query_spec

# A request phrased like an example of `members.lockers`, in words neither description uses.
REQUEST = "which member has got locker 17"
LOCKER_EXAMPLES = ["who has locker 12", "whose locker is number 40", "which member rents locker 3"]


def _two_agents(write_spec: SpecWriter, tmp_path: Path, operations: OperationIndex,
                examples: list[str], root: str) -> Registry:
    """Two member query agents with neutral descriptions; `lockers` gets `examples`."""
    contact = valid_query_spec() | {
        "name": "members.contact",
        "description": "Show a member's contact details: phone number, email and address.",
    }
    lockers = valid_query_spec() | {
        "name": "members.lockers",
        "description": "Storage rentals held on an account.",
    }
    if examples:
        lockers["examples"] = examples
    write_spec(contact, root=root)
    write_spec(lockers, root=root)
    return load_registry(tmp_path / root, operations)


def test_examples_are_texts_of_their_own() -> None:
    spec = AgentSpec.model_validate(valid_query_spec() | {
        "description": 'Show a member: "show me Jane", "pull up his record".',
        "examples": ["  who's member 1042  ", "show me Jane"]})
    texts = agent_texts(spec)
    assert spec.examples == ["who's member 1042", "show me Jane"]
    # The quoted examples stay; an entry already quoted is embedded once.
    assert texts[1:4] == ["show me Jane", "pull up his record", "who's member 1042"]
    assert len(texts) == 5  # definition, three requests, summary line


def test_an_example_moves_its_agent_up(write_spec: SpecWriter, tmp_path: Path,
                                       operations: OperationIndex) -> None:
    plain = _two_agents(write_spec, tmp_path, operations, [], root="plain")
    taught = _two_agents(write_spec, tmp_path, operations, LOCKER_EXAMPLES, root="taught")
    assert plain.version != taught.version

    vectors = agent_vectors(taught)
    owners = [vectors.specs[i].name for i in vectors.owner]
    assert owners.count("members.lockers") == owners.count("members.contact") + 3

    def score(registry: Registry) -> float:
        ranked = rank_agents(REQUEST, top_k=2, registry=registry)
        return next(r.score for r in ranked if r.agent == "members.lockers")

    before, after = score(plain), score(taught)
    assert after > before + 0.1
    assert rank_agents(REQUEST, top_k=1, registry=taught)[0].agent == "members.lockers"
    # The other agent's requests still go to it.
    assert rank_agents("what's her phone number", top_k=1,
                       registry=taught)[0].agent == "members.contact"


def test_the_real_registry_has_examples_for_every_agent(registry: Registry) -> None:
    thin = [spec.name for spec in registry if not 5 <= len(spec.examples) <= 8]
    assert thin == []


CASES: list[tuple[str, Any, str]] = [
    ("empty example", ["show me Jane", "   "],
     "examples[1]: String should have at least 1 character"),
    ("long example", ["x" * 201], "examples[0]: String should have at most 200 characters"),
    ("too many examples", [f"request {i}" for i in range(21)],
     "examples: List should have at most 20 items after validation, not 21"),
    ("not a string", ["show me Jane", 3], "examples[1]: Input should be a valid string"),
    ("not a list", "show me Jane", "examples: Input should be a valid list"),
]


@pytest.mark.parametrize(("examples", "expected"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_examples(write_spec: SpecWriter, operations: OperationIndex,
                      examples: Any, expected: str) -> None:
    path = write_spec(valid_query_spec() | {"examples": examples})
    assert [str(p) for p in validate_paths([path], operations)] == [f"{path}: {expected}"]


def test_good_examples_are_valid(write_spec: SpecWriter, operations: OperationIndex) -> None:
    examples = ["x" * 200, *(f"request {i}" for i in range(19))]
    path = write_spec(valid_query_spec() | {"examples": examples})
    assert validate_paths([path], operations) == []
