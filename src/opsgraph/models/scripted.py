"""The scripted chat model: real graph, real agent loops, no model behind them.

`scripted:<path>` answers every call from a file (see `opsgraph.models.script`). The
runtime tags each call with metadata `{"opsgraph_stage": ..., "task_id": ...}` in its
RunnableConfig; the model answers from the matching entry and keeps no state:

- `decompose` → the file's `plan`, as a call of the bound tool, so
  `with_structured_output(TaskPlan)` parses it (include_raw works too);
- `task` → turn *n* of that task, where *n* is the number of AI messages already in the
  call's messages (a new thread starts at 0; a resumed one continues where it stopped);
- `synthesise` → the `synthesis` text, streamed word by word through `_stream`/`_astream`,
  the words spread evenly over the delay;
- `harness` → the `harness` entry of the call's `step_id` (a list: reply *n* as for turns).

Why invoke/stream are overridden: langchain-core calls `_stream` without the run manager
(so without the call's metadata) on the streaming paths, so the public entry points copy
the config's metadata into a call keyword that reaches `_generate` and `_stream` alike.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCall
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig, ensure_config
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from opsgraph.errors import RunAborted
from opsgraph.models.script import Script, ScriptedTurn, load_script
from opsgraph.settings import get_settings

STAGE_KEY: Final = "opsgraph_stage"
TASK_KEY: Final = "task_id"
log = logging.getLogger(__name__)
STEP_KEY: Final = "step_id"
STAGES: Final = ("decompose", "task", "synthesise", "harness")
CALL_METADATA_KWARG: Final = "opsgraph_call_metadata"
_NAMED_CHOICES: Final = frozenset({"auto", "any", "none", "required"})


class ScriptedModelError(RunAborted):
    """A scripted model was asked something its file does not answer."""

    code = "scripted_model"


@dataclass(frozen=True, slots=True)
class _Reply:
    """What one call answers, before it becomes a message or a stream of chunks."""

    content: str
    tool_calls: list[ToolCall]
    delay_s: float
    usage: UsageMetadata

    def message(self) -> AIMessage:
        return AIMessage(content=self.content, tool_calls=self.tool_calls,
                         usage_metadata=self.usage,
                         response_metadata={"model_name": "scripted"})

    def paced(self) -> Iterator[tuple[float, ChatGenerationChunk]]:
        """The streamed chunks, each with the second of the call it is due at: the words
        arrive evenly over the reply's delay (as a model streams its answer while it writes
        it), the last chunk, with the tool calls and usage, at the delay."""
        words = _words(self.content)
        for i, word in enumerate(words):
            yield (self.delay_s * (i + 1) / len(words),
                   ChatGenerationChunk(message=AIMessageChunk(content=word)))
        yield self.delay_s, ChatGenerationChunk(message=AIMessageChunk(
            content="",
            tool_call_chunks=[
                tool_call_chunk(name=tc["name"], args=json.dumps(tc["args"]), id=tc["id"],
                                index=i)
                for i, tc in enumerate(self.tool_calls)
            ],
            usage_metadata=self.usage,
            response_metadata={"model_name": "scripted"},
            chunk_position="last",
        ))


def _words(text: str) -> list[str]:
    """Split into word-sized chunks that join back to exactly `text`."""
    return [piece for piece in re.split(r"(?<=\s)(?=\S)", text) if piece]


def _tokens(text: str) -> int:
    # A rough count (4 characters a token) so usage accounting sees plausible numbers.
    return (len(text) + 3) // 4


def _usage(messages: Sequence[BaseMessage], content: str, calls: list[ToolCall]) -> UsageMetadata:
    prompt = sum(_tokens(m.text) + _tokens(json.dumps(getattr(m, "tool_calls", [])))
                 for m in messages)
    out = _tokens(content) + sum(_tokens(json.dumps(tc["args"])) for tc in calls)
    return UsageMetadata(input_tokens=prompt, output_tokens=out, total_tokens=prompt + out)


def _tool_name(choice: Any) -> str | None:
    """The tool a `tool_choice` names, if it names one."""
    if isinstance(choice, str) and choice not in _NAMED_CHOICES:
        return choice
    if isinstance(choice, Mapping):
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
        if isinstance(choice.get("name"), str):
            return str(choice["name"])
    return None


def _call_id(task_id: str, turn: int, n: int) -> str:
    safe = re.sub(r"[^A-Za-z0-9_-]", "_", task_id)
    return f"call_{safe}_{turn}_{n}"


class ScriptedChatModel(BaseChatModel):
    """A chat model that answers from a scripted file, by stage and task (no state)."""

    path: str
    """The YAML or JSON script (docs/reference.md, "Scripted model files")."""

    @property
    def _llm_type(self) -> str:
        return "opsgraph-scripted"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"path": self.path}

    # -- binding ---------------------------------------------------------------------------

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Accept tools as a real model would; only their names are ever read."""
        formatted = [convert_to_openai_tool(tool) for tool in tools
                     if not (isinstance(tool, dict) and "cachePoint" in tool)]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)

    # -- entry points: carry the call's metadata to _generate and _stream -----------------

    def invoke(self, input: LanguageModelInput, config: RunnableConfig | None = None, *,
               stop: list[str] | None = None, **kwargs: Any) -> AIMessage:
        return super().invoke(input, config, stop=stop, **_tagged(config, kwargs))

    async def ainvoke(self, input: LanguageModelInput, config: RunnableConfig | None = None,
                      *, stop: list[str] | None = None, **kwargs: Any) -> AIMessage:
        return await super().ainvoke(input, config, stop=stop, **_tagged(config, kwargs))

    def stream(self, input: LanguageModelInput, config: RunnableConfig | None = None, *,
               stop: list[str] | None = None, **kwargs: Any) -> Iterator[AIMessageChunk]:
        return super().stream(input, config, stop=stop, **_tagged(config, kwargs))

    async def astream(self, input: LanguageModelInput, config: RunnableConfig | None = None,
                      *, stop: list[str] | None = None,
                      **kwargs: Any) -> AsyncIterator[AIMessageChunk]:
        async for chunk in super().astream(input, config, stop=stop,
                                           **_tagged(config, kwargs)):
            yield chunk

    # -- generation ------------------------------------------------------------------------

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        reply = self._reply(messages, kwargs, run_manager)
        if reply.delay_s:
            time.sleep(reply.delay_s)
        return ChatResult(generations=[ChatGeneration(message=reply.message())])

    async def _agenerate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                         run_manager: AsyncCallbackManagerForLLMRun | None = None,
                         **kwargs: Any) -> ChatResult:
        reply = self._reply(messages, kwargs, run_manager)
        if reply.delay_s:
            await asyncio.sleep(reply.delay_s)
        return ChatResult(generations=[ChatGeneration(message=reply.message())])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        reply = self._reply(messages, kwargs, run_manager)
        start = time.monotonic()
        for due, chunk in reply.paced():
            if (wait := start + due - time.monotonic()) > 0:
                time.sleep(wait)
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        reply = self._reply(messages, kwargs, run_manager)
        start = time.monotonic()
        for due, chunk in reply.paced():
            if (wait := start + due - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    # -- answering from the script ---------------------------------------------------------

    def _view(self, messages: list[BaseMessage]) -> list[BaseMessage]:
        """The messages a task's turn is counted on (all of them; a subclass answering as
        one of several roles that share a history counts its own). Usage is always that
        of every message sent."""
        return messages

    def _reply(self, messages: list[BaseMessage], kwargs: Mapping[str, Any],
               run_manager: CallbackManagerForLLMRun | AsyncCallbackManagerForLLMRun | None,
               ) -> _Reply:
        # The run manager's metadata includes what parent runs pass down; the call's own
        # config (carried in the keyword) wins where both have a key.
        metadata = {**(run_manager.metadata if run_manager is not None else {}),
                    **(kwargs.get(CALL_METADATA_KWARG) or {})}
        stage, task_id = metadata.get(STAGE_KEY), metadata.get(TASK_KEY)
        script = load_script(self.path)
        if stage == "decompose":
            content, calls, delay = self._plan(script, kwargs)
        elif stage == "task":
            content, calls, delay = self._turn(script, task_id, self._view(messages))
        elif stage == "synthesise":
            if script.synthesis is None:
                raise self._error("stage synthesise: the file has no `synthesis`")
            content, calls, delay = script.synthesis, [], script.synthesis_delay_ms
        elif stage == "harness":
            content, calls, delay = self._harness(script, metadata.get(STEP_KEY), messages), [], 0
        else:
            raise self._error(f"call has {STAGE_KEY}={stage!r} in its metadata; expected one "
                              f"of {', '.join(STAGES)} (pass config={{'metadata': "
                              f"{{'{STAGE_KEY}': ..., '{TASK_KEY}': ...}}}})")
        return _Reply(content, calls, delay / 1000, _usage(messages, content, calls))

    def _plan(self, script: Script, kwargs: Mapping[str, Any]) -> tuple[str, list[ToolCall], int]:
        if script.plan is None:
            raise self._error("stage decompose: the file has no `plan`")
        tools = kwargs.get("tools") or []
        name = _tool_name(kwargs.get("tool_choice"))
        if name is None and tools:
            name = str(tools[0]["function"]["name"])
        if name is None:
            # No structured output asked for: answer the plan as JSON text.
            return json.dumps(script.plan), [], script.plan_delay_ms
        # Deep copies: callers may mutate what they get, the cached script must not change.
        call = ToolCall(name=name, args=copy.deepcopy(script.plan), id="call_plan_0",
                        type="tool_call")
        return "", [call], script.plan_delay_ms

    def _turn(self, script: Script, task_id: Any,
              messages: Sequence[BaseMessage]) -> tuple[str, list[ToolCall], int]:
        if not isinstance(task_id, str) or not task_id:
            raise self._error(f"stage task: the call's metadata has no {TASK_KEY}")
        turns = script.turns.get(task_id)
        if turns is None:
            known = ", ".join(sorted(script.turns)) or "none"
            raise self._error(f"stage task, task {task_id!r}: the file scripts no turns for "
                              f"it (scripted tasks: {known})")
        index = sum(isinstance(m, AIMessage) for m in messages)
        if index >= len(turns):
            raise self._error(f"stage task, task {task_id!r}: no turn left — this is turn "
                              f"{index + 1} and the file scripts {len(turns)}")
        turn: ScriptedTurn = turns[index]
        calls = [ToolCall(name=tc.name, args=copy.deepcopy(tc.args), type="tool_call",
                          id=tc.id or _call_id(task_id, index, n))
                 for n, tc in enumerate(turn.tool_calls)]
        return turn.content or "", calls, turn.delay_ms

    def _harness(self, script: Script, step_id: Any, messages: Sequence[BaseMessage]) -> str:
        replies = script.harness.get(step_id) if isinstance(step_id, str) else None
        if replies is None:
            known = ", ".join(sorted(script.harness)) or "none"
            raise self._error(f"stage harness, step {step_id!r}: the file scripts no reply "
                              f"for it (scripted steps: {known})")
        if isinstance(replies, str):
            return replies
        index = sum(isinstance(m, AIMessage) for m in messages)
        if index >= len(replies):
            raise self._error(f"stage harness, step {step_id!r}: no reply left — this is "
                              f"attempt {index + 1} and the file scripts {len(replies)}")
        return replies[index]

    def _error(self, message: str) -> ScriptedModelError:
        path = Path(self.path)
        if path.parent == get_settings().home / "demo":
            # demo mode's filled example: the person sees what happened, not a server path
            log.warning("demo mode: scripted example %s: %s", self.path, message)
            example = path.stem.rsplit("-", 1)[0].replace("_", " ")
            return ScriptedModelError(
                f"demo mode's scripted answer to this example ({example}) cannot go on: "
                f"{message.split(': ', 1)[-1]}. Demo mode answers its example requests "
                "only as scripted; set OPSGRAPH_MODEL to a model you can reach for "
                "anything else.")
        return ScriptedModelError(f"scripted model {self.path!r}: {message}",
                                  file=self.path)


def _tagged(config: RunnableConfig | None, kwargs: dict[str, Any]) -> dict[str, Any]:
    """`kwargs` plus the call's metadata, unless a caller already put it there."""
    if CALL_METADATA_KWARG in kwargs:
        return kwargs
    metadata = dict(ensure_config(config).get("metadata") or {})
    return {**kwargs, CALL_METADATA_KWARG: metadata}
