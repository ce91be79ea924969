"""The Dockerfile's stages read as data: each stage's environment (inherited from the stage
it is built on) and its ENTRYPOINT / CMD in exec form — so a test can start the image's
primary command exactly as written."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Stage:
    """One `FROM ... AS name` stage."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    entrypoint: list[str] = field(default_factory=list)
    cmd: list[str] = field(default_factory=list)


def _instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) with continuation lines joined and comments dropped."""
    joined, out = text.replace("\\\n", " "), []
    for line in joined.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            out.append((word.upper(), rest.strip()))
    return out


def stages(path: Path = ROOT / "Dockerfile") -> dict[str, Stage]:
    """Every named stage, in order; the last one is the default build target."""
    found: dict[str, Stage] = {}
    current: Stage | None = None
    for word, rest in _instructions(path.read_text(encoding="utf-8")):
        if word == "FROM":
            parts = rest.split()
            base = found.get(parts[0])
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else parts[0]
            current = Stage(name, dict(base.env) if base else {},
                            list(base.entrypoint) if base else [], list(base.cmd) if base else [])
            found[name] = current
        elif current is not None and word == "ENV":
            for pair in shlex.split(rest):
                key, _, value = pair.partition("=")
                current.env[key] = value
        elif current is not None and word == "ENTRYPOINT":
            current.entrypoint, current.cmd = json.loads(rest), []
        elif current is not None and word == "CMD":
            current.cmd = json.loads(rest)
    return found


def default_stage(path: Path = ROOT / "Dockerfile") -> Stage:
    """The stage `docker build` produces without --target."""
    return list(stages(path).values())[-1]
