"""A tenant's harness version's budget: steps, model calls and active seconds, checked
before each step and each model call of an `llm` step. The built-in harness, and a run
that fell back to it, have none: the safety net has no cap."""

from __future__ import annotations

from opsgraph.engine.budget import BudgetExceeded, SecondsBudget, seconds_used
from opsgraph.engine.context import RunContext
from opsgraph.engine.state import HarnessState
from opsgraph.harness.spec import HarnessDoc


def is_builtin(state: HarnessState) -> bool:
    """The run executes the built-in harness (not one it fell back to)."""
    return state.version == 0 and state.fallback is None


def capped(state: HarnessState) -> bool:
    """A tenant's version runs (not the built-in, nor the built-in a run fell back to): its
    model calls and seconds are capped."""
    return state.version != 0 and state.fallback is None


def seconds_budget(state: HarnessState, doc: HarnessDoc) -> SecondsBudget | None:
    """The deadline's budget while a tenant's version runs (None: the built-in, or a run
    that fell back to it)."""
    if not capped(state):
        return None
    return SecondsBudget(state.version, doc.budget.seconds)


def calls_so_far(ctx: RunContext) -> int:
    """The model calls of the message: its earlier runs' and this one's."""
    return ctx.spent_calls + ctx.usage.calls


def check_calls(ctx: RunContext, doc: HarnessDoc, state: HarnessState, extra: int) -> None:
    """`extra` more model calls fit the version's budget."""
    if not capped(state):
        return
    calls = calls_so_far(ctx) + extra
    if calls > doc.budget.model_calls:
        raise BudgetExceeded(f"harness version {state.version}: {calls} model calls, over "
                             f"its budget of {doc.budget.model_calls}", cap="model_calls")


def check_budget(ctx: RunContext, doc: HarnessDoc, state: HarnessState) -> None:
    """Before a step: the steps, model calls and active seconds so far fit the budget."""
    if state.fallback is not None:
        return  # the built-in answers once a version failed: the safety net has no cap
    budget, version = doc.budget, state.version
    steps = len(state.steps_ran) + 1
    if steps > budget.steps:
        raise BudgetExceeded(f"harness version {version}: {steps} steps, over its budget of "
                             f"{budget.steps}", cap="steps")
    check_calls(ctx, doc, state, extra=0)
    seconds = seconds_used(ctx)
    if seconds > budget.seconds:
        raise BudgetExceeded(f"harness version {version}: {seconds:.0f} seconds, over its "
                             f"budget of {budget.seconds}", cap="seconds")
