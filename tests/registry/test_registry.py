"""The real registry: valid, balanced, four visitor agents, versioned; the schema is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from opsgraph.errors import BadInput, NotFound
from opsgraph.principal import DOMAINS
from opsgraph.registry import get_registry, load_registry, validate_paths
from opsgraph.registry.loader import clear_registry_cache
from opsgraph.registry.operation_index import OperationIndex
from opsgraph.registry.registry import Registry
from opsgraph.registry.schema import main as schema_main
from opsgraph.registry.schema import render_schema
from opsgraph.settings import get_settings

from .conftest import AGENTS, ROOT

VISITOR_AGENTS = {
    "bookings.public_availability", "events.public_calendar",
    "knowledge.faq", "knowledge.opening_hours",
}


def test_the_registry_validates_clean(operations: OperationIndex) -> None:
    assert validate_paths([AGENTS], operations) == []


def test_counts_and_visitor_allowlist(registry: Registry) -> None:
    kinds = [spec.kind for spec in registry]
    assert kinds.count("query") >= 20
    assert kinds.count("action") >= 20
    assert {spec.name for spec in registry.visitor_agents()} == VISITOR_AGENTS
    for spec in registry.visitor_agents():
        assert spec.kind == "query" and spec.read_only and not spec.write_tools
    assert {spec.domain for spec in registry} == set(DOMAINS)


def test_query_agents_read_and_action_agents_propose(registry: Registry) -> None:
    for spec in registry:
        if spec.kind == "query":
            assert spec.read_only and spec.write_tools == []
            # knowledge agents navigate before they read: a step budget of 4 rounds
            assert spec.round_limit == (4 if spec.domain == "knowledge" else 2), spec.name
        else:
            assert not spec.read_only and spec.roles and spec.write_tools, spec.name
            assert spec.round_limit == 5


def test_get_and_errors(registry: Registry) -> None:
    assert registry.get("members.update").tool_names == [
        "members_search", "members_get", "members_update"]
    assert "members.update" in registry
    with pytest.raises(NotFound):
        registry.get("members.nope")
    assert [s.name for s in registry] == sorted(registry.agents)


def test_version_is_the_content(operations: OperationIndex, tmp_path: Path) -> None:
    first = load_registry(AGENTS, operations).version
    assert first == load_registry(AGENTS, operations).version and len(first) == 64
    copy = tmp_path / "agents"
    for path in AGENTS.rglob("*.yaml"):
        target = copy / path.relative_to(AGENTS)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(path.read_text())
    assert load_registry(copy, operations).version == first
    faq = copy / "knowledge" / "faq.yaml"
    faq.write_text(faq.read_text().replace("model_tier: light", "model_tier: default"))
    assert load_registry(copy, operations).version != first


def test_get_registry_is_cached_per_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPSGRAPH_AGENTS", str(AGENTS))
    get_settings.cache_clear()
    clear_registry_cache()
    assert get_registry() is get_registry()
    assert len(get_registry()) == len(list(AGENTS.rglob("*.yaml")))


def test_get_registry_shares_one_load_per_real_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    link = tmp_path / "agents-link"
    link.symlink_to(AGENTS.resolve(), target_is_directory=True)
    clear_registry_cache()
    monkeypatch.setenv("OPSGRAPH_AGENTS", str(AGENTS.resolve()))
    get_settings.cache_clear()
    direct = get_registry()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPSGRAPH_AGENTS", "agents-link")  # relative, through a symlink
    get_settings.cache_clear()
    assert get_registry() is direct
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "agents-link").mkdir(parents=True)  # the same words mean another folder
    monkeypatch.chdir(elsewhere)
    with pytest.raises(BadInput, match="elsewhere/agents-link: path: no agent specs"):
        get_registry()


def test_summaries_match_the_cli_shape(registry: Registry) -> None:
    row = next(r for r in registry.summaries() if r["name"] == "invoices.refund")
    assert row == {
        "name": "invoices.refund", "domain": "invoices", "kind": "action",
        "operations": ["refund"], "read_only": False, "roles": ["manager", "admin"],
        "entitlement": "invoices", "visitor": False,
        "tools": ["invoices.list", "invoices.get", "invoices.refund"],
    }


def test_committed_schema_is_current() -> None:
    committed = (AGENTS / "schema.json").read_text(encoding="utf-8")
    assert committed == render_schema(), "run: python -m opsgraph.registry.schema"


def test_schema_check_flags_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "schema.json"
    stale.write_text("{}\n")
    assert schema_main(["--path", str(stale), "--check"]) == 1
    assert schema_main(["--path", str(stale)]) == 0
    assert schema_main(["--path", str(stale), "--check"]) == 0


def test_importing_the_registry_loads_no_onnxruntime() -> None:
    code = ("import sys, opsgraph.registry as r; r.load_registry('agents'); "
            "r.capability_summary(r.load_registry('agents')); "
            "print(sorted(m for m in ('onnxruntime', 'tokenizers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"
