"""Log lines: readable text locally, one JSON object a line on Lambda
(`OPSGRAPH_LOG_FORMAT`), each with the request's and the run's ids.

Every module logs through the standard library (`logging.getLogger(__name__)`); this module
puts one handler on the root logger, with a filter that copies the ids of `context` onto
each record. JSON lines are written by AWS Lambda Powertools' formatter (the fields
CloudWatch Logs Insights expects, the X-Ray trace id on Lambda; imported with this module,
as `telemetry.metrics` imports Powertools); the text formatter is the standard library's.

Figures go on a line as `extra` fields (`log.info("run finished", extra={...})`): in JSON
they are keys of the object, in text they follow the message as `key=value`.
"""

from __future__ import annotations

import logging
import sys

from aws_lambda_powertools.logging.formatter import LambdaPowertoolsFormatter

from opsgraph.settings import get_settings
from opsgraph.telemetry import context

_configured = False
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message", "asctime", "taskName", "figures", *context.FIELDS}
TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s%(figures)s"


class ContextIds(logging.Filter):
    """Copies the request's and the run's ids onto every record (None where unknown)."""

    def filter(self, record: logging.LogRecord) -> bool:
        known = context.ids()
        for name in context.FIELDS:
            if not hasattr(record, name):
                setattr(record, name, known.get(name))
        return True


class TextFormatter(logging.Formatter):
    """`time level logger: message key=value ...`, ids last, for a person to read."""

    def __init__(self) -> None:
        super().__init__(TEXT_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        extra = {k: v for k, v in record.__dict__.items()
                 if k not in _STANDARD and not k.startswith("_")}
        ids = {k: getattr(record, k, None) for k in context.FIELDS}
        shown = {**extra, **{k: v for k, v in ids.items() if v}}
        record.figures = "".join(f" {k}={v}" for k, v in shown.items())
        return super().format(record)


def json_formatter() -> logging.Formatter:
    """Powertools' JSON formatter: level, location, message, timestamp, service, and every
    extra field (the ids among them); keys without a value are left out."""
    return LambdaPowertoolsFormatter(service="opsgraph", utc=True, use_rfc3339=True)


def configure_logging(force: bool = False) -> None:
    """One handler on the root logger, in the format settings choose (once per process)."""
    global _configured
    if _configured and not force:
        return
    settings = get_settings()
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextIds())
    handler.setLevel(settings.log_level)  # a library's own DEBUG logger stays quiet too
    handler.setFormatter(json_formatter() if settings.log_format == "json"
                         else TextFormatter())
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_opsgraph", False)]:
        root.removeHandler(old)
    handler._opsgraph = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(settings.log_level)
    _configured = True
