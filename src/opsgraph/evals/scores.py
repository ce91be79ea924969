"""The eight dimensions and one case's score on one of them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DIMENSIONS: tuple[str, ...] = ("plan_valid", "routing", "dependencies", "tool_choice",
                               "interrupts", "preview", "groundedness", "pii")


@dataclass(frozen=True, slots=True)
class Score:
    """Whether a case passed a dimension; `reason` says why not (shown in the report)."""

    passed: bool
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed, "reason": self.reason}


PASS = Score(True)


def fail(*reasons: str) -> Score:
    """A failed score; several reasons are joined with '; '."""
    return Score(False, "; ".join(r for r in reasons if r))


def verdict(reasons: list[str]) -> Score:
    """Pass when there is no reason to fail."""
    return fail(*reasons) if reasons else PASS
