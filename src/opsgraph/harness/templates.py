"""Harness templates: `{{path | filter | filter:arg}}` over the run's variables.

Roots: `message` (the request), any variable a step saved (`{{draft.answer}}`), `user`
(`name`, `role` — never ids or secrets), `tenant` (`name`, `timezone`, settings the tenant
shows) and `client` (the member the conversation is about, when resolved). A missing path
renders as an empty string (use `default`). Filters: `trim`, `lower`, `capfirst`,
`strip_prefix:"text"`, `default:"text"`, `truncate:N`. A text that is exactly `@name` is the
prompt of that name (its own templates rendered too).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from opsgraph.errors import BadInput

PLACEHOLDER = re.compile(r"\{\{\s*(.*?)\s*\}\}")
PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$")
FILTER = re.compile(r'^(?P<name>[a-z_]+)(?::\s*(?P<arg>"(?:[^"\\]|\\.)*"|-?\d+))?$')
PROMPT_REF = re.compile(r"^@([a-z][a-z0-9_]{0,39})$")
RESERVED_ROOTS = frozenset({"message", "user", "tenant", "client"})


def _truncate(value: str, arg: Any) -> str:
    n = int(arg)
    return value if len(value) <= n else value[: max(n - 1, 0)].rstrip() + "…"


FILTERS: dict[str, Callable[[str, Any], str]] = {
    "trim": lambda v, _: v.strip(),
    "lower": lambda v, _: v.lower(),
    "capfirst": lambda v, _: v[:1].upper() + v[1:],
    "strip_prefix": lambda v, a: v[len(a):] if a is not None and v.startswith(a) else v,
    "default": lambda v, a: v if v.strip() else str(a),
    "truncate": _truncate,
}
NEEDS_ARG = frozenset({"strip_prefix", "default", "truncate"})


def parse(expr: str) -> tuple[str, list[tuple[str, Any]]]:
    """`path | f | g:arg` → the path and its filters; `BadInput` naming what is wrong."""
    path, *filters = [part.strip() for part in expr.split("|")]
    if not PATH.match(path):
        raise BadInput(f"{{{{{expr}}}}}: '{path}' is not a variable path")
    parsed: list[tuple[str, Any]] = []
    for text in filters:
        m = FILTER.match(text)
        if not m or m["name"] not in FILTERS:
            raise BadInput(f"{{{{{expr}}}}}: unknown filter '{text}' (filters: "
                           f"{', '.join(FILTERS)})")
        raw = m["arg"]
        if (raw is None) == (m["name"] in NEEDS_ARG):
            raise BadInput(f"{{{{{expr}}}}}: filter '{m['name']}' "
                           + ("needs an argument" if raw is None else "takes no argument"))
        if m["name"] == "truncate" and raw is not None and not raw.lstrip("-").isdigit():
            raise BadInput(f"{{{{{expr}}}}}: truncate needs a number")
        parsed.append((m["name"], json.loads(raw) if raw is not None else None))
    return path, parsed


def check(template: str) -> list[str]:
    """The variable paths a template reads; `BadInput` on a malformed placeholder."""
    return [parse(m[1])[0] for m in PLACEHOLDER.finditer(template)]


def lookup(env: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (`draft.answer`, `hits.0.title`), or None."""
    value: Any = env
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return None
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str, ensure_ascii=False)


def render(template: str, env: Mapping[str, Any]) -> str:
    """The template with every placeholder replaced."""
    def one(m: re.Match[str]) -> str:
        path, filters = parse(m[1])
        value = _text(lookup(env, path))
        for name, arg in filters:
            value = FILTERS[name](value, arg)
        return value

    return PLACEHOLDER.sub(one, template)


def render_text(text: str | list[str], env: Mapping[str, Any],
                prompts: Mapping[str, str]) -> str:
    """A step's text (one template or several joined by blank lines; `@name` is a prompt)."""
    parts = [text] if isinstance(text, str) else text
    out = []
    for part in parts:
        ref = PROMPT_REF.match(part.strip())
        source = prompts.get(ref[1], "") if ref else part
        rendered = render(source, env).strip()
        if rendered:
            out.append(rendered)
    return "\n\n".join(out)
