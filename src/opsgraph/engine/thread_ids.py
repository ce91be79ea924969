"""The one rule for a thread id, wherever one comes in: a path's `{thread_id}`, a body's
`thread_id` (its pydantic pattern, `THREAD_ID_PATTERN`), a run started from any entry."""

from __future__ import annotations

import re

from opsgraph.errors import BadInput

_THREAD_ID = r"[A-Za-z0-9_.-]{1,128}"
THREAD_ID_PATTERN = f"^{_THREAD_ID}$"
"""The rule as a JSON Schema / pydantic `pattern`."""
_MATCH = re.compile(_THREAD_ID)


def checked_thread_id(thread_id: str, field: str = "thread_id") -> str:
    """`thread_id` when it is one, else 400 naming `field`."""
    if not _MATCH.fullmatch(thread_id):
        raise BadInput(f"{field}: 1 to 128 letters, digits, '_', '.' or '-'", field=field)
    return thread_id
