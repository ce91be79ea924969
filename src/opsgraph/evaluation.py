"""The eval suite behind `opsgraph eval`: routing quality against fixed targets.

Each routing dataset (default `evals/datasets/routing.yaml` of the checkout) goes through
`evaluate_routing`; a dataset passes when top-3 ≥ 0.95 and top-1 ≥ 0.85, and the suite
passes when every dataset does. Routing ranks agents with local embeddings and calls no
chat model: a `--model` given is validated and recorded, and the report says that it was
not evaluated. `write_report` leaves `report.json` and a readable `report.md`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from opsgraph.errors import BadInput
from opsgraph.registry.routing_eval import RoutingReport, evaluate_routing, load_cases

TOP1_TARGET = 0.85
TOP3_TARGET = 0.95
MODEL_NOTE = ("routing is ranked by local embeddings; no chat model was called, so "
              "the model was not evaluated")


@dataclass(frozen=True, slots=True)
class DatasetResult:
    """One dataset's routing report and whether it met the targets."""

    dataset: str
    report: RoutingReport

    @property
    def passed(self) -> bool:
        return self.report.top1 >= TOP1_TARGET and self.report.top3 >= TOP3_TARGET

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "passed": self.passed, **self.report.to_json()}


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The suite's result: every dataset, the totals, the model named and the targets."""

    datasets: list[DatasetResult]
    model: str | None = None
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    @property
    def passed(self) -> bool:
        return all(d.passed for d in self.datasets)

    @property
    def cases(self) -> int:
        return sum(d.report.cases for d in self.datasets)

    def _weighted(self, name: str) -> float:
        total = sum(float(getattr(d.report, name)) * d.report.cases for d in self.datasets)
        return total / self.cases

    def misses(self) -> list[dict[str, Any]]:
        """Every miss, with the dataset it came from."""
        return [{"dataset": d.dataset, **m} for d in self.datasets
                for m in d.report.to_json()["misses"]]

    def to_json(self) -> dict[str, Any]:
        """The `report.json` / `--json` form."""
        return {"suite": "routing", "passed": self.passed,
                "targets": {"top1": TOP1_TARGET, "top3": TOP3_TARGET},
                "model": self.model, "model_evaluated": False, "model_note": MODEL_NOTE,
                "cases": self.cases, "top1": self._weighted("top1"),
                "top3": self._weighted("top3"),
                "ms_per_request": self._weighted("ms_per_request"),
                "created_at": self.created_at.isoformat(),
                "datasets": [d.to_json() for d in self.datasets], "misses": self.misses()}


def repo_root() -> Path | None:
    """The checkout this module runs from (a parent with `pyproject.toml` and `evals/`)."""
    for parent in Path(__file__).resolve().parents:
        if (parent / "evals").is_dir() and (parent / "pyproject.toml").exists():
            return parent
    return None


def default_dataset() -> Path:
    """`evals/datasets/routing.yaml` of the checkout, else of the working directory."""
    root = repo_root() or Path.cwd()
    return root / "evals" / "datasets" / "routing.yaml"


def dataset_files(paths: list[Path]) -> list[Path]:
    """The dataset files named: a file as given, a folder as its `*.yaml` / `*.yml` files."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml"))
            if not found:
                raise BadInput(f"{path}: dataset: no .yaml files in this folder")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise BadInput(f"{path}: dataset: no such file or folder")
    return files


def check_dataset(path: Path) -> None:
    """`BadInput` naming the file, and the line or field, when a dataset is not valid."""
    try:
        yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: dataset: cannot read ({exc})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise BadInput(f"{path}: invalid YAML: {where}{problem}") from None
    load_cases(path)


def run_eval(datasets: list[Path] | None = None, *, model: str | None = None) -> EvalReport:
    """Check every dataset first, then evaluate each; the model spec is only recorded."""
    canonical = None
    if model is not None:
        from opsgraph.models.spec import parse_model_spec

        canonical = str(parse_model_spec(model))
    files = dataset_files(datasets or [default_dataset()])
    for path in files:
        check_dataset(path)
    results = [DatasetResult(str(path), evaluate_routing(path)) for path in files]
    return EvalReport(results, model=canonical)


def _pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def render_text(report: EvalReport) -> str:
    """The human summary printed by `opsgraph eval`."""
    data = report.to_json()
    lines = [f"routing eval: {'PASSED' if report.passed else 'MISSED TARGETS'}",
             f"cases {data['cases']}  top-1 {_pct(data['top1'])} (target "
             f"{_pct(TOP1_TARGET)})  top-3 {_pct(data['top3'])} (target {_pct(TOP3_TARGET)})"
             f"  {data['ms_per_request']:.2f} ms/request",
             f"model: {report.model or 'none given'} ({MODEL_NOTE})"]
    for d in report.datasets:
        lines.append(f"  {d.dataset}: {d.report.cases} cases, top-1 {_pct(d.report.top1)}, "
                     f"top-3 {_pct(d.report.top3)} {'ok' if d.passed else 'MISSED'}")
    for m in data["misses"]:
        expected = f"{m['domain']}.{m['verb']}"
        lines.append(f"  {'top-3' if m['in_top3'] else 'miss '}  {expected:<26} "
                     f"{m['request']!r} → {', '.join(m['top'])}")
    return "\n".join(lines)


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: EvalReport) -> str:
    """`report.md`: a table of the datasets and totals, then the misses."""
    data = report.to_json()
    out = ["# Routing eval", "",
           f"Result: **{'passed' if report.passed else 'missed targets'}** "
           f"(targets: top-1 ≥ {_pct(TOP1_TARGET)}, top-3 ≥ {_pct(TOP3_TARGET)}) · "
           f"{data['created_at']}", "",
           f"Model: {report.model or 'none given'}. Note: {MODEL_NOTE}.", "",
           "| dataset | cases | top-1 | top-3 | ms/request | result |",
           "|---|---:|---:|---:|---:|---|"]
    for d in report.datasets:
        out.append(f"| {_md_cell(d.dataset)} | {d.report.cases} | {_pct(d.report.top1)} | "
                   f"{_pct(d.report.top3)} | {d.report.ms_per_request:.2f} | "
                   f"{'pass' if d.passed else 'miss'} |")
    out.append(f"| **all** | {data['cases']} | {_pct(data['top1'])} | {_pct(data['top3'])} | "
               f"{data['ms_per_request']:.2f} | {'pass' if report.passed else 'miss'} |")
    out += ["", f"## Misses ({len(data['misses'])})", ""]
    if not data["misses"]:
        out.append("None: every request ranked a right agent first.")
    else:
        out += ["| request | expected | in top 3 | ranked |", "|---|---|---|---|"]
        out += [f"| {_md_cell(m['request'])} | {m['domain']}.{m['verb']} | "
                f"{'yes' if m['in_top3'] else 'no'} | {_md_cell(', '.join(m['top']))} |"
                for m in data["misses"]]
    return "\n".join(out) + "\n"


def write_report(report: EvalReport, directory: Path) -> list[Path]:
    """Write `report.json` and `report.md` into `directory` (created); returns both paths."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(f"{directory}: --report: cannot create the folder ({exc})") from None
    if not directory.is_dir():
        raise BadInput(f"{directory}: --report: not a folder")
    as_json = directory / "report.json"
    as_md = directory / "report.md"
    as_json.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    as_md.write_text(render_markdown(report), encoding="utf-8")
    return [as_json, as_md]
