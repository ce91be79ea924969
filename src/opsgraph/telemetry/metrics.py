"""Metrics as CloudWatch embedded-metric-format (EMF) lines on stdout, written by AWS
Lambda Powertools' `EphemeralMetrics`: on Lambda, CloudWatch Logs turns each line into
metric points in the `opsgraph` namespace, with no agent and no API call
(`OPSGRAPH_METRICS`, on by default on Lambda; off, nothing is written). Powertools is
imported with this module: 8-12 ms of CPU, under the bar of tests/test_layers.py's `HEAVY`.

Metrics (dimension `service=opsgraph` on each, plus the one named):

- `RunSeconds` (Seconds), `Runs` (Count), by `Outcome` (the run's status): per run;
- `ModelLatency` (Milliseconds), `ModelCalls`, `ModelThrottles` (Count; throttled or
  retried): per model call, stage and model as properties;
- `TooManyRequests` (Count), by `Limit` (`runs`, `budget`): per 429;
- `LeaseLost`, `ResumeFailed` (Count): a run that lost its thread, a resumed run that
  failed;
- `CardsWaiting` (Count), `OldestCardAgeSeconds` (Seconds): by the expiry job, every run.
"""

from __future__ import annotations

import logging
from typing import Any

from aws_lambda_powertools.metrics import EphemeralMetrics

from opsgraph.settings import get_settings

NAMESPACE = "opsgraph"
log = logging.getLogger(__name__)


def emit(metrics: dict[str, tuple[float, str]], dimensions: dict[str, str] | None = None,
         **properties: Any) -> None:
    """One EMF line: `metrics` name → (value, unit), under `dimensions` (and the service);
    `properties` ride along as searchable fields (ids, never dimensions)."""
    if not get_settings().metrics:
        return

    try:
        emf = EphemeralMetrics(namespace=NAMESPACE, service="opsgraph")
        for name, value in (dimensions or {}).items():
            emf.add_dimension(name=name, value=value)
        for name, (number, unit) in metrics.items():
            emf.add_metric(name=name, unit=unit, value=number)
        for name, value in properties.items():
            if value is not None:
                emf.add_metadata(key=name, value=value)
        emf.flush_metrics()
    except Exception:  # a metric must never fail the work it measures
        log.warning("could not write metrics %s", sorted(metrics), exc_info=True)


def count(name: str, dimensions: dict[str, str] | None = None, **properties: Any) -> None:
    """One occurrence of `name`."""
    emit({name: (1, "Count")}, dimensions, **properties)
