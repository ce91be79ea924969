"""Model spec strings: the four providers, and clear errors for anything else."""

from __future__ import annotations

from pathlib import Path

import pytest

from opsgraph.errors import BadInput
from opsgraph.models import ModelSpec, check_model_spec, parse_model_spec


@pytest.mark.parametrize(("text", "provider", "name"), [
    ("bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0", "bedrock",
     "us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("openai:llama3.1:8b", "openai", "llama3.1:8b"),
    ("llamacpp:/models/qwen.gguf", "llamacpp", "/models/qwen.gguf"),
    ("scripted:tests/data/plan.yaml", "scripted", "tests/data/plan.yaml"),
    ("scripted:case.json", "scripted", "case.json"),
    ("  Bedrock:model-x  ", "bedrock", "model-x"),
])
def test_parses_each_provider(text: str, provider: str, name: str) -> None:
    spec = parse_model_spec(text)
    assert spec == ModelSpec(provider, name)  # type: ignore[arg-type]
    assert str(spec) == f"{provider}:{name}"


@pytest.mark.parametrize("text", [
    "", "sonnet", "gpt:4o", "bedrock:", "openai:   ", ":model",
    "llamacpp:/models/qwen.bin", "scripted:plan.txt",
])
def test_rejects_anything_else_naming_spec_and_forms(text: str) -> None:
    with pytest.raises(BadInput) as err:
        parse_model_spec(text)
    assert repr(text) in err.value.message
    for form in ("bedrock:<model-id>", "openai:<model>", "llamacpp:<path.gguf>",
                 "scripted:<path.yaml|json>"):
        assert form in err.value.message
    assert err.value.status == 400


def test_check_requires_the_named_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(BadInput, match="does not exist"):
        check_model_spec(f"scripted:{missing}")
    present = tmp_path / "here.yaml"
    present.write_text("synthesis: hi\n")
    assert check_model_spec(f"scripted:{present}").path == present
    assert check_model_spec("bedrock:any-model").path is None
