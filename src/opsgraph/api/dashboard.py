"""The operations dashboard: one static page that talks to the API (chat + approvals)."""

from __future__ import annotations

from functools import lru_cache
from importlib.resources import files

from starlette.responses import HTMLResponse


@lru_cache(maxsize=1)
def _page() -> str:
    return files("opsgraph.api").joinpath("static/dashboard.html").read_text(encoding="utf-8")


def dashboard_page() -> HTMLResponse:
    """The dashboard HTML."""
    return HTMLResponse(_page())
