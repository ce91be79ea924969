"""Every model call of a run goes through here: metadata, budget, concurrency, usage.

The metadata `{"opsgraph_stage", "task_id"}` tags each call (the scripted model answers
from it); the per-run budget and the process-wide slot limit stop runaways and overload;
a tenant's harness budget of seconds is a deadline on each call (`engine.budget`).
A writer task's turns run as LangGraph `@task`s so that on resume they come back from the
checkpoint instead of calling the model again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import Runnable, RunnableConfig, RunnableSequence
from langgraph.config import get_stream_writer
from langgraph.func import task
from langgraph.runtime import get_runtime

from opsgraph.engine.budget import call_within_budget, stream_within_budget
from opsgraph.engine.context import RunContext
from opsgraph.engine.context_budget import context_window, fit_messages
from opsgraph.engine.tool_loop import dispatch
from opsgraph.models.factory import get_chat_model
from opsgraph.models.limits import model_call_slot
from opsgraph.models.prompt_cache import bind_tools_cached
from opsgraph.models.usage import usage_of
from opsgraph.telemetry import metrics
from opsgraph.telemetry.traces import span
from opsgraph.tools.contract import BoundTool, ToolOutcome

log = logging.getLogger("opsgraph.model_calls")


def _metadata(stage: str, task_id: str | None, step_id: str | None = None) -> dict[str, Any]:
    tags: dict[str, Any] = {"opsgraph_stage": stage, "task_id": task_id}
    if step_id is not None:  # a harness step's call
        tags["step_id"] = step_id
    return tags


THROTTLES = ("throttl", "too many requests", "rate limit", "ratelimit", "429")
"""Words of a provider's error that say it refused for load, not for the request."""


@contextmanager
def _observed(spec: str, stage: str, task_id: str | None) -> Iterator[dict[str, Any]]:
    """A model call's span and log line (model, stage, milliseconds, tokens, whether it
    waited for a slot, was throttled or retried) and its metric points. The block puts the
    reply under `"reply"` and a wait for a slot under `"queued"`."""

    seen: dict[str, Any] = {}
    started = time.perf_counter()
    error: BaseException | None = None
    try:
        with span("model call", model=spec, stage=stage, task_id=task_id or ""):
            yield seen
    except BaseException as exc:
        error = exc
        raise
    finally:
        ms = round((time.perf_counter() - started) * 1000, 1)
        usage = usage_of(seen.get("reply"))
        meta = getattr(seen.get("reply"), "response_metadata", None) or {}
        retries = int((meta.get("ResponseMetadata") or {}).get("RetryAttempts") or 0)
        throttled = error is not None and any(w in f"{type(error).__name__} {error}".lower()
                                              for w in THROTTLES)
        fields = {"model": spec, "stage": stage, "task_id": task_id, "ms": ms,
                  "input_tokens": usage["input"], "output_tokens": usage["output"],
                  "queued": seen.get("queued", 0), "retries": retries,
                  "throttled": throttled, "failed": error is not None}
        log.info("model call", extra={k: v for k, v in fields.items() if v is not None})
        metrics.emit({"ModelLatency": (ms, "Milliseconds"), "ModelCalls": (1, "Count"),
                      "ModelThrottles": (int(throttled or retries > 0), "Count")},
                     stage=stage, model=spec)


@contextmanager
def _slot(ctx: RunContext, stage: str, task_id: str | None,
          seen: dict[str, Any] | None = None) -> Iterator[None]:
    """The run's lease still holds; then one of the process's model-call slots, queued
    behind runs that started earlier. A call that has to wait says so as a `progress`
    event with its place in the queue."""
    where = f"{stage} {task_id or ''}".strip()
    ctx.check_lease(f"the model call of {where}")
    emit = get_stream_writer()

    def waiting(position: int) -> None:
        if seen is not None:
            seen["queued"] = position
        data: dict[str, Any] = {"stage": "waiting_for_model", "position": position,
                                "step": stage}
        if task_id:
            data["task_id"] = task_id
        emit({"event": "progress", "data": data})

    with model_call_slot(ctx.ticket, on_wait=waiting):
        yield


def _bound(spec: str, tools: list[dict[str, Any]], choice: str | None) -> Any:
    model = get_chat_model(spec)
    if not tools:
        return model
    return bind_tools_cached(model, tools, tool_choice=choice)


def invoke(ctx: RunContext, spec: str, messages: list[BaseMessage], tools: list[dict[str, Any]],
           *, stage: str, task_id: str | None = None, choice: str | None = None,
           step_id: str | None = None) -> AIMessage:
    """One model call with tools offered; `choice` "any" (the reply must call a tool) or a
    tool's name (it must call that one); counted, limited and tagged (`step_id`: a harness
    step's call)."""
    ctx.usage.spend_call(ctx.call_budget, f"{stage} {task_id or ''}".strip())
    messages = fit_messages(messages, tools, context_window(spec))
    model = _bound(spec, tools, choice)
    where = f"{stage} {task_id or step_id or ''}".strip()
    with _observed(spec, stage, task_id or step_id) as seen, \
            _slot(ctx, stage, task_id or step_id, seen):
        reply = seen["reply"] = call_within_budget(ctx, where, lambda: model.invoke(
            messages, config={"metadata": _metadata(stage, task_id, step_id)}))
    if not isinstance(reply, AIMessage):
        reply = AIMessage(content=str(getattr(reply, "content", reply)))
    ctx.usage.add(usage_of(reply))
    return reply


def structured(ctx: RunContext, spec: str, messages: list[BaseMessage],
               schema: type[Any] | dict[str, Any], *, stage: str) -> Any:
    """A typed answer (e.g. a plan) via the model's structured output; a dict schema
    answers a dict."""
    ctx.usage.spend_call(ctx.call_budget, stage)
    shape = [schema] if isinstance(schema, dict) else []  # a grammar the server adds
    messages = fit_messages(messages, shape, context_window(spec))
    model, parser = _structured_parts(spec, schema)
    config: RunnableConfig = {"metadata": _metadata(stage, None)}
    with _observed(spec, stage, None) as seen, _slot(ctx, stage, None, seen):
        reply = seen["reply"] = call_within_budget(ctx, stage, lambda: model.invoke(
            messages, config=config))
    ctx.usage.add(usage_of(reply))
    return parser.invoke(reply, config=config)


def _structured_parts(spec: str, schema: type[Any] | dict[str, Any]
                      ) -> tuple[Runnable[Any, Any], Runnable[Any, Any]]:
    """The model call and the parsing of its reply that `with_structured_output` chains
    (`model | parser`, for every provider opsgraph builds), to be invoked one after the
    other: the reply is kept for its usage without `include_raw=True`, whose two
    `RunnableParallel`s each start a thread pool on every call (measured with the scripted
    model: 4.2 → 1.1 ms a plan call)."""
    chain = get_chat_model(spec).with_structured_output(schema)
    if not isinstance(chain, RunnableSequence):
        raise TypeError(f"model {spec}: its structured output is a {type(chain).__name__}, "
                        "not the model's call followed by a parser")
    rest = chain.steps[1:]
    return chain.first, rest[0] if len(rest) == 1 else RunnableSequence(*rest)


def stream_text(ctx: RunContext, spec: str, messages: list[BaseMessage], *,
                stage: str) -> Iterator[str]:
    """Stream the text of one answer as it comes."""
    ctx.usage.spend_call(ctx.call_budget, stage)
    messages = fit_messages(messages, [], context_window(spec))
    model = get_chat_model(spec)
    chunks: list[AIMessageChunk] = []
    with _observed(spec, stage, None) as seen, _slot(ctx, stage, None, seen):
        for chunk in stream_within_budget(ctx, stage, lambda: model.stream(
                messages, config={"metadata": _metadata(stage, None)})):
            chunks.append(chunk)
            text = chunk.text if isinstance(chunk.text, str) else str(chunk.content)
            if text:
                yield text
        if chunks:
            seen["reply"] = chunks[0] + chunks[1:] if len(chunks) > 1 else chunks[0]
    if chunks:
        ctx.usage.add(usage_of(seen["reply"]))


def tool_round(calls: list[dict[str, Any]], tools: Mapping[str, BoundTool],
               requires: Mapping[str, Sequence[str]],
               succeeded: set[str]) -> list[dict[str, Any]]:
    """A checkpointed round of tool calls (writer tasks): on resume its results come back
    from the checkpoint — a preview is not computed again against the state its own
    approval already changed."""
    return [o.to_record() for o in dispatch(calls, tools, requires, succeeded)]


def replayable_round(calls: Sequence[dict[str, Any]], tools: Mapping[str, BoundTool],
                     requires: Mapping[str, Sequence[str]],
                     succeeded: set[str]) -> list[ToolOutcome]:
    """`tool_round` as the tool loop calls it."""
    records = tool_round_task(list(calls), tools, requires, set(succeeded)).result()
    return [ToolOutcome.from_record(r) for r in records]


def code_turn(tool: str, calls: list[dict[str, Any]]) -> AIMessage:
    """A writer's first turn made by code (every required argument resolved): the calls
    (one per record an `each` slot names), no model asked, checkpointed so that a resumed
    run replays the same calls."""
    return AIMessage(content="", tool_calls=[
        {"name": tool, "args": args, "id": f"code_{tool}" + (f"_{n}" if n else ""),
         "type": "tool_call"} for n, args in enumerate(calls)])


def model_turn(spec: str, messages: list[BaseMessage], tools: list[dict[str, Any]],
               stage: str, task_id: str, choice: str | None = None) -> AIMessage:
    """A checkpointed model turn (writer tasks): replayed, not re-asked, on resume."""
    ctx = get_runtime(RunContext).context
    return invoke(ctx, spec, messages, tools, stage=stage, task_id=task_id,
                  choice=choice)


# Tasks by the names of their functions (what their checkpointed writes carry). Not `@task`
# on the functions: LangGraph reuses a task's runnable only when the module attribute of
# the function's qualified name is the function itself, and otherwise builds it again (with
# `inspect.signature`) on every call.
tool_round_task = task(tool_round)
code_turn_task = task(code_turn)
model_turn_task = task(model_turn)
