"""The published JSON Schema of agent specs: `agents/schema.json`.

Regenerate with `python -m opsgraph.registry.schema` (or `--check` to fail when the
committed file is stale). Editors pick it up from the `yaml-language-server` comment at the
top of each spec.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from opsgraph.registry.spec import AgentSpec
from opsgraph.settings import get_settings

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"


def agent_schema() -> dict[str, Any]:
    """The JSON Schema of one agent spec file."""
    schema = AgentSpec.model_json_schema()
    return {"$schema": SCHEMA_DIALECT, **schema, "title": "opsgraph agent spec"}


def render_schema() -> str:
    """The schema as committed: 2-space JSON with a trailing newline."""
    return json.dumps(agent_schema(), indent=2, ensure_ascii=False) + "\n"


def default_schema_path() -> Path:
    """`schema.json` inside the registry folder."""
    return get_settings().agents_dir / "schema.json"


def main(argv: list[str] | None = None) -> int:
    """Write the schema (default) or, with `--check`, exit 1 when the file is stale."""
    parser = argparse.ArgumentParser(prog="python -m opsgraph.registry.schema")
    parser.add_argument("--path", type=Path, default=None, help="where schema.json lives")
    parser.add_argument("--check", action="store_true", help="only check it is up to date")
    args = parser.parse_args(argv)
    path: Path = args.path or default_schema_path()
    text = render_schema()
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path}: stale; run python -m opsgraph.registry.schema", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
