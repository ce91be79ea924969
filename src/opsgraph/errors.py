"""The one exception tree of opsgraph: every error class of the package, where it lives
(this module unless a module is named), the HTTP status and what it means.

    OpsgraphError                 root; carries an HTTP status and a stable error code
    ├── BadInput          400     malformed or semantically invalid input (names the field)
    │   ├── AmbiguousReference    a human name matched several records (lists candidates)
    │   └── HarnessInvalid        a harness document that cannot be saved (harness.validate)
    ├── Unauthorized      401     missing or invalid bearer token
    ├── Forbidden         403     a gate, role or tenant boundary refused the action
    │   ├── ReadOnly              a read-only channel (email) asked to change something
    │   ├── ReadOnlyViolation     a read or a preview tried to write (store.scope)
    │   └── OwnChange             a requester deciding their own change (approvals.duties)
    ├── NotFound          404     no such record, change, agent or operation (in this tenant)
    ├── MethodNotAllowed  405     a method the path does not serve (GET on a stateless MCP link)
    ├── Conflict          409     the state moved (a change is no longer pending)
    │   ├── NotWaiting            a decision for a run that no longer waits (engine.runner)
    │   ├── WaitingForChange      decided before the change it waits for (approvals.dependents)
    │   └── TestsFailing          an activation whose tests fail, not forced (harness.versions)
    ├── Gone              410     expired (a pending change past its expiry)
    │   └── Orphaned              the change's run can no longer resume (approvals.decisions)
    ├── Unprocessable     422     well-formed input that fails the schema (edited values)
    ├── PayloadTooLarge   413     a request body over the cap
    ├── TooManyRequests   429     a limit on runs in flight or the daily model-call budget;
    │                             `retry_after_s` says when to try again
    ├── RunAborted        500     a run stopped at a cap or on a fault; never for bad input
    │   ├── CapReached            a run limit stopped a runaway (engine.context)
    │   ├── BudgetExceeded        past the harness version's budget (engine.budget)
    │   ├── PlanRejected          the plan stayed invalid after a repair (engine.decompose)
    │   ├── RunCancelled          the run was asked to stop (engine.cancel)
    │   ├── LeaseLost             the run lost its thread's lease (engine.threads)
    │   ├── StateUnreadable       a checkpoint this version cannot read (engine.state)
    │   ├── ScriptedModelError    a scripted model asked what its file does not answer
    │   │                         (models.scripted)
    │   ├── ModelUnavailable 503  no credentials, region or access for the model
    │   │                         (models.bedrock)
    │   └── DemoMode         503  not one of the demo's examples, and no model (models.auto)
    ├── StepFailed        500     a step of a tenant's harness version failed (it falls back)
    ├── ConfigurationError 500    an environment variable holds a value opsgraph cannot use
    ├── RecordRunFailed   500     a queue record's run failed: SQS delivers it again
    │                             (api.lambda_events)
    ├── StoreUnavailable  503     the store could not be reached or started (store.embedded)
    └── BenchFailure      500     a measurement could not be made (bench.drive)

Outside the tree: `PatternError` (harness.patterns), a `ValueError` for a pattern RE2 cannot
run; validation reports it as a problem (`patterns.problem`), a run's harness step logs it.

A model's bad tool call is not an exception at all: the tool answers it with a message the
model can act on (`opsgraph.operations.invoke`, `opsgraph.tools.guard`).
"""

from __future__ import annotations

from typing import Any, ClassVar


class OpsgraphError(Exception):
    """Root of every error opsgraph raises on purpose."""

    status: ClassVar[int] = 500
    code: ClassVar[str] = "internal"

    def __init__(self, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.message = message
        self.detail = detail

    def to_json(self) -> dict[str, Any]:
        """The `{"error": {"code", "message"}}` body every client sees (docs/reference.md)."""
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.detail:
            body["detail"] = self.detail
        return {"error": body}


class BadInput(OpsgraphError):
    """Malformed or invalid input; the message names the field."""

    status = 400
    code = "bad_input"


class AmbiguousReference(BadInput):
    """A human reference matched several records; `candidates` lists them."""

    code = "ambiguous_reference"

    def __init__(self, message: str, candidates: list[dict[str, Any]]) -> None:
        super().__init__(message, candidates=candidates)
        self.candidates = candidates


class Unauthorized(OpsgraphError):
    status = 401
    code = "unauthorized"


class Forbidden(OpsgraphError):
    status = 403
    code = "forbidden"


class ReadOnly(Forbidden):
    """A read-only principal (channel `email`) asked for a write."""

    code = "read_only"


class NotFound(OpsgraphError):
    status = 404
    code = "not_found"


class MethodNotAllowed(OpsgraphError):
    status = 405
    code = "method_not_allowed"


class Conflict(OpsgraphError):
    status = 409
    code = "conflict"


class Gone(OpsgraphError):
    status = 410
    code = "expired"


class Unprocessable(OpsgraphError):
    status = 422
    code = "invalid"


class PayloadTooLarge(OpsgraphError):
    """A request body over the cap."""

    status = 413
    code = "payload_too_large"


class TooManyRequests(OpsgraphError):
    """A limit refused the request for now; `retry_after_s` says when to try again."""

    status = 429
    code = "too_many_requests"

    def __init__(self, message: str, retry_after_s: int, **detail: Any) -> None:
        super().__init__(message, retry_after_s=retry_after_s, **detail)
        self.retry_after_s = retry_after_s


class RunAborted(OpsgraphError):
    """A run stopped: a cap was hit (`cap` names it) or the plan could not be repaired."""

    status = 500
    code = "run_aborted"


class StepFailed(OpsgraphError):
    """A step of a tenant's harness version failed at run time (the run falls back to the
    built-in harness)."""

    status = 500
    code = "step_failed"


class ConfigurationError(OpsgraphError):
    """An environment variable holds a value opsgraph cannot use."""

    status = 500
    code = "configuration"
