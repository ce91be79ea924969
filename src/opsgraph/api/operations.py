"""One operation of the catalogue over HTTP: `GET /v1/operations/{op_id}` describes it
(its input's JSON schema, to build edit forms) and `POST` runs it with the caller's
permissions (`operations.direct`: a write applies at once, audited)."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.bodies import parse_body
from opsgraph.api.principals import caller
from opsgraph.api.request_models import OperationRequest
from opsgraph.api.route_doc import TENANT, ApiRoute, Param
from opsgraph.errors import Forbidden
from opsgraph.gates import operation_decision
from opsgraph.operations.catalogue import CATALOGUE, get_operation
from opsgraph.operations.direct import call_operation
from opsgraph.operations.invoke import plan_of
from opsgraph.store.scope import TenantScope


async def describe_operation(request: Request) -> Response:
    principal = await caller(request)
    op = get_operation(str(request.path_params["op_id"]))
    decision = operation_decision(principal, op,
                                  await run_in_threadpool(plan_of, TenantScope.of(principal)))
    if not decision:
        raise Forbidden(decision.reason, gate=decision.gate)
    return JSONResponse({"id": op.id, "kind": op.kind, "description": op.description,
                         "input_schema": op.input.model_json_schema()})


async def operation(request: Request) -> Response:
    principal = await caller(request)
    body = parse_body(await request.body(), OperationRequest)
    result = await run_in_threadpool(call_operation, principal, request.path_params["op_id"],
                                     body.args)
    return JSONResponse(result)


OP_ID = Param("op_id", "path", {"type": "string", "enum": sorted(CATALOGUE)},
              "The operation (docs/reference.md lists them).")
ROUTES = (
    ApiRoute("GET", "/v1/operations/{op_id}", describe_operation,
             "An operation and the JSON schema of its input (to build edit forms)",
             "visitor", response=("OperationDescription",), errors=(403,),
             params=(OP_ID, TENANT)),
    ApiRoute("POST", "/v1/operations/{op_id}", operation,
             "Run one operation with the caller's permissions (a write applies at once)",
             "visitor", response=("ReadResult", "WriteResult"), request=(OperationRequest,),
             body_required=False, errors=(403, 409), params=(OP_ID, TENANT)),
)
