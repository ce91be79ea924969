"""The harness's admin routes beside `GET /v1/harness` (api.harness_view): save, check,
compare, test, activate and roll back versions — the same functions the CLI (`opsgraph
harness ...`) and the admin MCP link call.

    POST /v1/harness/versions                {doc, note?} → {version, changes}
    POST /v1/harness/validate                {doc} → {valid, problems: [{path, message}]}
    GET  /v1/harness/changes?from=A&to=B     {from, to, changes: [{op, path, old, new}]}
    POST /v1/harness/versions/{version}/test the test report (kept beside the version)
    POST /v1/harness/versions/{version}/activate  {force?, overriding?} → the activation
    POST /v1/harness/rollback                the activation it undid

An invalid document is 400 `invalid` with `detail.problems`. Activation runs the version's
tests first; failing ones refuse it (409 `tests_failing`, `detail.failing` naming them).
Forcing is a second, explicit request: `force: true` with `overriding`, the failing tests'
names as the refusal listed them — refused again if they are no longer the ones failing.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.harness_view import version_param
from opsgraph.api.principals import admin_caller
from opsgraph.api.request_models import Body
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.errors import BadInput
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

ACTION = "managing the harness"
NOTE_MAX = 500


class HarnessDocRequest(Body):
    """`POST /v1/harness/validate`: a harness document to check."""

    doc: dict[str, Any] = Field(description="A harness version document (`opsgraph harness "
                                            "schema`).")


class HarnessSaveRequest(HarnessDocRequest):
    """`POST /v1/harness/versions`: a new version (saved, not activated)."""

    note: str = Field("", max_length=NOTE_MAX, description="Why this version.")


class HarnessActivateRequest(Body):
    """`POST /v1/harness/versions/{version}/activate`."""

    force: bool = Field(False, description="Activate although tests fail (audited); needs "
                                           "`overriding`.")
    overriding: list[str] | None = Field(None, max_length=200, description="With `force`: "
                                         "the failing tests' names, as the refusal listed "
                                         "them.")

    @model_validator(mode="after")
    def _named(self) -> HarnessActivateRequest:
        if self.force and not self.overriding:
            raise ValueError("force needs `overriding`: the names of the failing tests you "
                             "mean to activate past")
        return self


def _path_version(request: Request) -> int:
    version = version_param(str(request.path_params["version"]))
    assert version is not None
    return version


async def save_version(request: Request) -> Response:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    principal = await admin_caller(request, ACTION)
    body = parse_body(await request.body(), HarnessSaveRequest)
    number, changes = await run_in_threadpool(
        lambda: versions.save(TenantScope.of(principal), body.doc, actor=principal.user_id,
                              note=body.note))
    return JSONResponse({"version": number, "changes": changes}, status_code=201)


async def validate_doc(request: Request) -> Response:
    # heavy: opsgraph.harness (cold start)
    from opsgraph.harness.validate import HarnessInvalid, validate

    await admin_caller(request, ACTION)
    body = parse_body(await request.body(), HarnessDocRequest)
    try:
        validate(body.doc)
    except HarnessInvalid as exc:
        return JSONResponse({"valid": False, "problems": exc.problems})
    return JSONResponse({"valid": True, "problems": []})


def changes_between(principal: Principal, old: int, new: int) -> dict[str, Any]:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)
    from opsgraph.harness.changes import diff  # heavy: opsgraph.harness (cold start)

    scope = TenantScope.of(principal)
    return {"from": old, "to": new,
            "changes": diff(versions.load(scope, old), versions.load(scope, new))}


async def changes(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    old, new = (version_param(request.query_params.get(name)) for name in ("from", "to"))
    if old is None or new is None:
        raise BadInput("from, to: both versions are needed (`?from=1&to=2`)")
    return JSONResponse(await run_in_threadpool(changes_between, principal, old, new))


def test_version(principal: Principal, version: int) -> dict[str, Any]:
    from opsgraph.evals.harness_tests import run_tests  # heavy: opsgraph.evals (cold start)
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    scope = TenantScope.of(principal)
    report: dict[str, Any] = run_tests(scope, version, versions.load(scope, version))
    versions.record_test(scope, version, report)
    return report


async def run_version_tests(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    return JSONResponse(await run_in_threadpool(test_version, principal,
                                                _path_version(request)))


async def activate(request: Request) -> Response:
    from opsgraph.evals.harness_tests import activate_checked  # heavy: opsgraph.evals (cold start)

    principal = await admin_caller(request, ACTION)
    version = _path_version(request)
    body = parse_body(await request.body(), HarnessActivateRequest)
    return JSONResponse(await run_in_threadpool(
        lambda: activate_checked(TenantScope.of(principal), version, actor=principal.user_id,
                                 force=body.force, overriding=body.overriding)))


async def rollback(request: Request) -> Response:
    from opsgraph.harness import versions  # heavy: opsgraph.harness (cold start)

    principal = await admin_caller(request, ACTION)
    return JSONResponse(await run_in_threadpool(
        lambda: versions.rollback(TenantScope.of(principal), actor=principal.user_id)))


NUMBER = {"type": "string", "pattern": "^[0-9]{1,9}$"}
VERSION = Param("version", "path", NUMBER, "The version (0: the built-in harness).")
ROUTES = (
    ApiRoute("POST", "/v1/harness/versions", save_version, "Validate and save a new harness "
             "version, not activated (admin)", "bearer", ok=201,
             request=(HarnessSaveRequest,), errors=(403, 409)),
    ApiRoute("POST", "/v1/harness/validate", validate_doc, "Check a harness document "
             "without saving it: its problems by path (admin)", "bearer",
             request=(HarnessDocRequest,), errors=(403,)),
    ApiRoute("GET", "/v1/harness/changes", changes, "The change list from one version to "
             "another (admin)", "bearer", errors=(400, 403), params=(
                 Param("from", "query", NUMBER, "The older version.", required=True),
                 Param("to", "query", NUMBER, "The newer version.", required=True))),
    ApiRoute("POST", "/v1/harness/versions/{version}/test", run_version_tests, "Run a "
             "version's tests and keep the report (admin)", "bearer", errors=(400, 403),
             params=(VERSION,)),
    ApiRoute("POST", "/v1/harness/versions/{version}/activate", activate, "Run a version's "
             "tests and activate it when they pass; forcing names the failing tests (admin)",
             "bearer", request=(HarnessActivateRequest,), body_required=False,
             errors=(403, 409), params=(VERSION,)),
    ApiRoute("POST", "/v1/harness/rollback", rollback, "Re-activate the version active "
             "before this one (admin)", "bearer", errors=(403, 409)),
)
