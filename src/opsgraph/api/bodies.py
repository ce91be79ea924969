"""Reading JSON a caller sent: UTF-8, a bounded depth, numbers the store can hold, text
without lone surrogates. Every way a body can be wrong is a `BadInput` naming where.

The same rules hold for request bodies and for queue records' bodies: what passes here
can be stored (BSON) and encoded (UTF-8) further down without a surprise. A request body
then meets its route's model (`parse_body`): wrong fields are one `Unprocessable` (422)
listing each field and its problem.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from opsgraph.errors import BadInput, Unprocessable

MAX_DEPTH = 32
"""Objects and arrays nested deeper than this are refused."""
_INT64 = 2**63 - 1
M = TypeVar("M", bound=BaseModel)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _int(text: str) -> int:
    # Checked on the digits first: int() of thousands of digits is slow, then refused.
    if len(text.lstrip("-")) > 19 or abs(value := int(text)) > _INT64:
        raise BadInput(f"body: the number {text[:24]}{'…' if len(text) > 24 else ''} is out "
                       "of range (a 64-bit integer at most)")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadInput(f"body: the number {text[:24]}{'…' if len(text) > 24 else ''} is out "
                       "of range")
    return value


def _constant(name: str) -> float:
    raise BadInput(f"body: {name} is not a JSON number")


def _where(path: list[str]) -> str:
    return "body" + "".join(path)


def _check_values(body: Any) -> None:
    """Depth and text of every value, iteratively (no recursion on caller-sized input)."""
    stack: list[tuple[Any, list[str], int]] = [(body, [], 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            if _SURROGATE.search(value):
                raise BadInput(f"{_where(path)}: contains a lone surrogate (not valid Unicode "
                               "text)")
            continue
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_DEPTH:
            raise BadInput(f"body: nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key, item in value.items():
                if _SURROGATE.search(key):
                    raise BadInput(f"{_where(path)}: a key contains a lone surrogate")
                stack.append((item, [*path, f".{key}"], depth + 1))
        else:
            stack.extend((item, [*path, f"[{i}]"], depth + 1) for i, item in enumerate(value))


def parse_json(text: str | bytes, what: str = "body") -> Any:
    """The JSON value of `text` (bytes must be UTF-8); BadInput naming what is wrong."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInput(f"{what}: not UTF-8 (byte 0x{text[exc.start]:02x} at position "
                           f"{exc.start})") from None
    try:
        value = json.loads(text, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{what}: invalid JSON ({exc.msg} at position {exc.pos})") from None
    except RecursionError:
        raise BadInput(f"{what}: nested deeper than {MAX_DEPTH} levels") from None
    except BadInput as exc:
        raise BadInput(exc.message.replace("body:", f"{what}:", 1)) from None
    try:
        _check_values(value)
    except BadInput as exc:
        raise BadInput(exc.message.replace("body", what, 1)) from None
    return value


def parse_json_object(raw: bytes, what: str = "body") -> dict[str, Any]:
    """The JSON object of `raw`; an empty body is `{}`."""
    if not raw:
        return {}
    body = parse_json(raw, what)
    if not isinstance(body, dict):
        raise BadInput(f"{what}: must be a JSON object")
    return body


def field_errors(exc: ValidationError) -> list[dict[str, str]]:
    """Pydantic's errors as `{field, message}`: the dotted path, and the problem in words
    (a wrong key of an object names the key: `models.Bad Name` `key: ...`)."""
    errors = []
    for err in exc.errors(include_url=False):
        loc = [str(part) for part in err["loc"]]
        key = bool(loc) and loc[-1] == "[key]"
        ctx = err.get("ctx") or {}
        message = str(ctx["error"]) if err["type"] == "value_error" and "error" in ctx else (
            err["msg"][:1].lower() + err["msg"][1:])
        errors.append({"field": ".".join(loc[:-1] if key else loc) or "body",
                       "message": f"key: {message}" if key else message})
    return errors


def validated(body: dict[str, Any], model: type[M]) -> M:
    """`body` as `model`, or the one 422 of a body whose fields are wrong: a message
    `<field>: <problem>; …` and the `errors` list of `{field, message}`."""
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        errors = field_errors(exc)
        raise Unprocessable("; ".join(f"{e['field']}: {e['message']}" for e in errors),
                            errors=errors) from None


def parse_body(raw: bytes, model: type[M]) -> M:
    """The request body `raw` as `model`: BadInput (400) unless it is a JSON object,
    Unprocessable (422) naming every field at fault otherwise."""
    return validated(parse_json_object(raw), model)
