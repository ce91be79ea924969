"""The whole suite in one call: check the inputs, run the cases, build the report."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, TextIO

from opsgraph.errors import BadInput
from opsgraph.evals.cases import dataset_files, default_dataset, load_cases
from opsgraph.evals.progress import Progress
from opsgraph.evals.report import build_report
from opsgraph.evals.run import run_cases
from opsgraph.evals.thresholds import load_thresholds


def checked_model(model: str | None) -> str:
    """The model spec to run (default: the default tier's, what chat uses), checked before
    any case runs: a named file must exist, a scripted file must be valid, the provider's
    client must build."""
    from opsgraph.models.factory import get_chat_model, tier_spec
    from opsgraph.models.script import load_script
    from opsgraph.models.spec import check_model_spec

    spec = check_model_spec(model or tier_spec("default"))
    if spec.provider == "scripted":
        load_script(spec.name)
    get_chat_model(str(spec))  # a provider's missing setting or extra: one error, not N
    return str(spec)


def run_suite(datasets: list[Path] | None = None, *, model: str | None = None,
              split: str = "all", concurrency: int = 2,
              progress: TextIO | None = None) -> dict[str, Any]:
    """Run the eval suite and return its report document (`opsgraph.evals.report`)."""
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
    try:
        results = run_cases(cases, spec, concurrency=concurrency,
                            on_case=lambda r: bar.advance(r.case.id, r.passed, r.run.seconds))
    finally:
        bar.close()
    return build_report([r.to_json() for r in results], thresholds=thresholds, model=spec,
                        datasets=[str(f) for f in files], split=split,
                        wall_seconds=time.perf_counter() - started)
