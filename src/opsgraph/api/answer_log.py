"""The answer log's routes (admin; opsgraph.engine.answer_log reads it from the thread log):

    GET /v1/answer-log[?limit&before&outcome&days]   {runs: [...], next}: finished runs,
                                                     newest first, filtered
    GET /v1/answer-log/{run_id}                      one run: its entry, plan, tasks (tools
                                                     called), sources, model calls, outcome
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from opsgraph.api.numbers import parse_number
from opsgraph.api.principals import admin_caller
from opsgraph.api.route_doc import ApiRoute, Param
from opsgraph.engine.answer_log import MAX_LIMIT, OUTCOMES, answer_log, run_detail
from opsgraph.principal import Principal
from opsgraph.store.scope import TenantScope

ACTION = "reading the answer log"
MAX_DAYS = 3660


def _page(principal: Principal, query: dict[str, str]) -> dict[str, Any]:
    limit = parse_number(query.get("limit", "20"), "limit", "a number of runs",
                         maximum=MAX_LIMIT)
    days = query.get("days")
    since = None if days is None else datetime.now(UTC) - timedelta(
        days=parse_number(days, "days", "a number of days", maximum=MAX_DAYS))
    return answer_log(TenantScope.of(principal), limit=limit, before=query.get("before"),
                      outcome=query.get("outcome") or None, since=since)


async def list_runs(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    return JSONResponse(await run_in_threadpool(_page, principal,
                                                dict(request.query_params)))


async def get_run(request: Request) -> Response:
    principal = await admin_caller(request, ACTION)
    return JSONResponse(await run_in_threadpool(run_detail, TenantScope.of(principal),
                                                str(request.path_params["run_id"])))


def _page_params() -> tuple[Param, ...]:
    number = {"type": "string", "pattern": "^[0-9]{1,4}$"}
    return (
        Param("limit", "query", number, f"Runs per page (1 to {MAX_LIMIT})."),
        Param("before", "query", {"type": "string"},
              "The `cursor` of the last run of the previous page."),
        Param("outcome", "query", {"type": "string", "enum": list(OUTCOMES)},
              "Only runs that finished so."),
        Param("days", "query", number, "Only runs of the last N days."))


ROUTES = (
    ApiRoute("GET", "/v1/answer-log", list_runs, "The tenant's finished runs, newest first: "
             "request, steps, tools, model calls, sources, outcome (admin)", "bearer",
             errors=(400, 403), params=_page_params),
    ApiRoute("GET", "/v1/answer-log/{run_id}", get_run, "One finished run: its plan, tasks "
             "and the tools they called, sources, model calls and outcome (admin)", "bearer",
             errors=(403,), params=(Param("run_id", "path", {"type": "string"},
                                          "The run's id."),)),
)
