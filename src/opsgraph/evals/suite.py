"""The whole suite in one call: check the inputs, run the cases, build the report."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, TextIO

from opsgraph.errors import BadInput
from opsgraph.evals.cases import dataset_files, default_dataset, load_cases
from opsgraph.evals.progress import Progress
from opsgraph.evals.report import build_report
from opsgraph.evals.run import CaseResult, run_cases
from opsgraph.evals.thresholds import load_thresholds
from opsgraph.models.factory import get_chat_model, tier_spec
from opsgraph.models.script import load_script
from opsgraph.models.spec import check_model_spec


def checked_model(model: str | None) -> str:
    """The model spec to run (default: the default tier's, what chat uses), checked before
    any case runs: a named file must exist, a scripted file must be valid, the provider's
    client must build."""
    spec = check_model_spec(model or tier_spec("default"))
    if spec.provider == "scripted":
        load_script(spec.name)
    get_chat_model(str(spec))  # a provider's missing setting or extra: one error, not N
    return str(spec)


def run_suite(datasets: list[Path] | None = None, *, model: str | None = None,
              split: str = "all", concurrency: int = 2,
              progress: TextIO | None = None, journal: Path | None = None) -> dict[str, Any]:
    """Run the eval suite and return its report document (`opsgraph.evals.report`).

    `journal`: each case's result is appended there (JSON lines) the moment it finishes, so
    a long real-model run stopped halfway keeps what it measured.
    """
    if concurrency < 1:
        raise BadInput("--concurrency: must be at least 1")
    spec = checked_model(model)
    files = dataset_files(datasets or [default_dataset()])
    cases = load_cases(files, split)
    if not cases:
        raise BadInput(f"--split: the dataset has no {split} cases")
    thresholds = load_thresholds()
    bar = Progress(len(cases), progress)
    started = time.perf_counter()
    if journal is not None:
        try:
            journal.parent.mkdir(parents=True, exist_ok=True)
            journal.write_text("", encoding="utf-8")
        except OSError as exc:
            raise BadInput(f"{journal}: --report: cannot write ({exc})") from None

    def finished(result: CaseResult) -> None:
        bar.advance(result.case.id, result.passed, result.run.seconds)
        if journal is not None:
            with journal.open("a", encoding="utf-8") as out:
                out.write(json.dumps(result.to_json(), default=str, ensure_ascii=False) + "\n")

    try:
        results = run_cases(cases, spec, concurrency=concurrency, on_case=finished)
    finally:
        bar.close()
    return build_report([r.to_json() for r in results], thresholds=thresholds, model=spec,
                        datasets=[str(f) for f in files], split=split,
                        wall_seconds=time.perf_counter() - started)
