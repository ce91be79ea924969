"""The benchmark's report: one row per measurement, printed as a table or as one JSON object.

A row carries what was measured (named values), the target it is held to, the ratio that
the target is about and whether it passed. Pass/fail is information: the bench exits 0 when
a target is missed and non-zero only when a measurement could not be made.
"""

from __future__ import annotations

import json
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Row:
    """One measurement: `ratio` is compared with `limit` (lower is better unless noted)."""

    case: str
    name: str
    measured: dict[str, float]
    summary: str
    ratio: float | None
    target: str
    limit: float | None = None
    higher_is_better: bool = False
    note: str = ""

    @property
    def passed(self) -> bool | None:
        """True/False against the limit; None when the row has no numeric target."""
        if self.limit is None or self.ratio is None:
            return None
        return self.ratio >= self.limit if self.higher_is_better else self.ratio <= self.limit

    def to_json(self) -> dict[str, Any]:
        """The row as JSON (with `passed`)."""
        return {**asdict(self), "passed": self.passed}


@dataclass
class Report:
    """Every row of one bench run, plus the profile of harness overhead."""

    rows: list[Row] = field(default_factory=list)
    dominant_costs: list[str] = field(default_factory=list)
    wall_phases: list[str] = field(default_factory=list)
    environment: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """One JSON object: rows, dominant costs, wall phases, environment, errors, elapsed
        seconds."""
        return {"rows": [row.to_json() for row in self.rows],
                "dominant_costs": self.dominant_costs, "wall_phases": self.wall_phases,
                "environment": self.environment,
                "errors": self.errors, "elapsed_s": round(self.elapsed_s, 1)}


def cpu_ratio_row(case: str, name: str, ours: tuple[float, float], base: tuple[float, float],
                  limit: float | None, note: str) -> Row:
    """A row judged on CPU time, ours ÷ a baseline's, both given as (wall, CPU) seconds."""
    return Row(case=case, name=name,
               measured={"cpu_ms": round(ours[1] * 1000, 1), "wall_ms": round(ours[0] * 1000, 1),
                         "baseline_cpu_ms": round(base[1] * 1000, 1),
                         "baseline_wall_ms": round(base[0] * 1000, 1)},
               summary=(f"{ours[1] * 1000:.0f} ms vs {base[1] * 1000:.0f} ms CPU (wall "
                        f"{ours[0] * 1000:.0f} vs {base[0] * 1000:.0f})"),
               ratio=ours[1] / base[1], limit=limit,
               target=f"≤ {limit}" if limit is not None else "reported", note=note)


def _verdict(row: Row) -> str:
    return {True: "pass", False: "FAIL", None: "info"}[row.passed]


def format_table(report: Report) -> str:
    """The human table: case, name, measured, target, ratio, verdict; notes underneath."""
    header = ("#", "measurement", "measured", "target", "ratio", "")
    lines = [(row.case, row.name, row.summary, row.target,
              "-" if row.ratio is None else f"{row.ratio:.2f}", _verdict(row))
             for row in report.rows]
    widths = [max(len(str(line[i])) for line in [header, *lines]) for i in range(6)]

    def fmt(cells: tuple[str, ...]) -> str:
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    out = [fmt(header), fmt(tuple("-" * w for w in widths))]
    out += [fmt(line) for line in lines]
    notes = [(row.case, row.note) for row in report.rows if row.note]
    if notes:
        out += ["", "Notes:"]
        for case, note in notes:
            out += textwrap.wrap(note, 100, initial_indent=f"  [{case}] ",
                                 subsequent_indent="      ")
    if report.dominant_costs:
        out += ["", "Dominant costs (harness CPU at 0 ms, case 3):"]
        out += [f"  {line}" for line in report.dominant_costs]
    if report.wall_phases:
        out += ["", "Where the wall time goes (case 1 at cap 8):"]
        out += [f"  {line}" for line in report.wall_phases]
    if report.errors:
        out += ["", "Errors:"] + [f"  {line}" for line in report.errors]
    env = ", ".join(f"{k}={v}" for k, v in report.environment.items())
    out += ["", f"Environment: {env}", f"Bench took {report.elapsed_s:.1f} s."]
    return "\n".join(out)


def format_json(report: Report) -> str:
    """The report as one JSON object on one line."""
    return json.dumps(report.to_json(), ensure_ascii=False)
