"""What `GET /v1/harness` answers, as pydantic models (the schemas of `/openapi.json`).

Kept beside `response_models` rather than in it only because that module had another
change in flight when this route landed; the shapes follow its conventions (`Out`: exactly
these fields; `Open`: at least these).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from opsgraph.api.response_models import Open, Out


class HarnessTestResult(Open):
    passed: int
    failed: int
    model: str | None = None
    at: str | None = None


class HarnessVersionRow(Open):
    version: int = Field(description="0 is the built-in harness.")
    active: bool
    created_at: str | None
    created_by: str
    note: str
    steps: int
    tests: int
    activated_at: str | None = Field(description="When it was last activated.")
    last_test: HarnessTestResult | None = Field(description="Its latest test run.")


class HarnessView(Out):
    """`GET /v1/harness`: every version, and one of them as JSON and as a flowchart."""

    versions: list[HarnessVersionRow] = Field(description="Oldest first, the built-in first.")
    version: int = Field(description="The version shown (`?version=N`, else the active one).")
    active: int = Field(description="The active version.")
    doc: dict[str, Any] = Field(description="The shown version's document, as saved.")
    svg: str = Field(description="Its flowchart, an SVG drawn from `doc`.")
