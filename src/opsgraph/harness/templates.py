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
FILTER = re.compile(r'(?P<name>[a-z_]+)(?::\s*(?P<arg>"(?:[^"\\]|\\.)*"|\S+))?')
# ASCII digits only: "٣".isdigit() is true and int() fails on "²"; bounded, so never huge
INTEGER = re.compile(r"-?[0-9]{1,9}")
INDEX = re.compile(r"[0-9]{1,9}")
TRUNCATE_MAX = 100_000
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
TEXT_ARG = frozenset({"strip_prefix"})
"""Filters whose argument is a quoted text (`default` takes a text or a number)."""


def parse(expr: str) -> tuple[str, list[tuple[str, Any]]]:
    """`path | f | g:arg` → the path and its filters; `BadInput` naming what is wrong."""
    path, *filters = [part.strip() for part in expr.split("|")]
    if not PATH.match(path):
        raise BadInput(f"{{{{{expr}}}}}: '{path}' is not a variable path")
    parsed: list[tuple[str, Any]] = []
    for text in filters:
        m = FILTER.fullmatch(text)
        if not m or m["name"] not in FILTERS:
            raise BadInput(f"{{{{{expr}}}}}: unknown filter '{text}' (filters: "
                           f"{', '.join(FILTERS)})")
        name, raw = m["name"], m["arg"]
        if (raw is None) == (name in NEEDS_ARG):
            raise BadInput(f"{{{{{expr}}}}}: filter '{name}' "
                           + ("needs an argument" if raw is None else "takes no argument"))
        parsed.append((name, None if raw is None else _argument(expr, name, raw)))
    return path, parsed


def _argument(expr: str, name: str, raw: str) -> Any:
    """A filter's argument: a quoted text (JSON string escapes) or a whole number in ASCII
    digits, as that filter takes it; `BadInput` naming the filter otherwise."""
    if raw.startswith('"'):
        try:
            text = json.loads(raw)
        except ValueError:
            raise BadInput(f"{{{{{expr}}}}}: filter '{name}': {raw} is not a valid quoted "
                           "text (escapes as in JSON)") from None
        if name == "truncate":
            raise BadInput(f"{{{{{expr}}}}}: truncate needs a number, not a text")
        return text
    if name in TEXT_ARG:
        raise BadInput(f"{{{{{expr}}}}}: filter '{name}' needs a quoted text, e.g. "
                       f'{name}:"Re: "')
    if not INTEGER.fullmatch(raw):
        raise BadInput(f"{{{{{expr}}}}}: filter '{name}': '{raw[:20]}' is not a whole number "
                       "(the digits 0-9, at most 9 of them)"
                       + ("" if name == "truncate" else ' nor a quoted text'))
    if name == "truncate" and not 1 <= int(raw) <= TRUNCATE_MAX:
        raise BadInput(f"{{{{{expr}}}}}: truncate:{raw}: the length must be from 1 to "
                       f"{TRUNCATE_MAX}")
    return int(raw)


def check(template: str) -> list[str]:
    """The variable paths a template reads; `BadInput` on a malformed placeholder."""
    return [parse(m[1])[0] for m in PLACEHOLDER.finditer(template)]


def lookup(env: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted path (`draft.answer`, `hits.0.title`), or None."""
    value: Any = env
    for part in path.split("."):
        if isinstance(value, Mapping):
            value = value.get(part)
        elif isinstance(value, list) and INDEX.fullmatch(part) and int(part) < len(value):
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


def render_values(value: Any, env: Mapping[str, Any]) -> Any:
    """Strings rendered as templates, inside lists and objects too."""
    if isinstance(value, str):
        return render(value, env)
    if isinstance(value, list):
        return [render_values(v, env) for v in value]
    if isinstance(value, dict):
        return {k: render_values(v, env) for k, v in value.items()}
    return value


def used_sources(text: str | list[str], prompts: Mapping[str, str],
                 env: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sources of the saved results a text reads (`{{draft.answer}}` → draft's)."""
    parts = [text] if isinstance(text, str) else list(text)
    sources: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for part in parts:
        ref = PROMPT_REF.match(part.strip())
        for path in check(prompts.get(ref[1], "") if ref else part):
            saved = env.get(path.split(".")[0])
            for src in saved.get("sources") or [] if isinstance(saved, dict) else []:
                key = (str(src.get("kind")), str(src.get("id")))
                if isinstance(src, dict) and key not in seen:
                    seen.add(key)
                    sources.append(src)
    return sources
