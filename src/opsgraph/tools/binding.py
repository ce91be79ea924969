"""Bind an agent's tools to one request: closures over the caller's tenant and user."""

from __future__ import annotations

from collections.abc import Iterable

from opsgraph.operations.base import Context
from opsgraph.operations.catalogue import get_operation
from opsgraph.principal import Plan
from opsgraph.tools.contract import BoundTool, ToolKind
from opsgraph.tools.guard import guard


def knowledge_base_empty(ctx: Context) -> bool:
    """Knowledge tools are left out while the tenant's knowledge base has no documents."""
    return ctx.scope["knowledge"].find_one({}, projection={"_id": 1}) is None


def bind_agent_tools(ctx: Context, tool_ids: Iterable[str], plan: Plan) -> dict[str, BoundTool]:
    """The agent's tools by tool name; a write operation is bound as a preview."""
    ops = [get_operation(op_id) for op_id in tool_ids]
    skip_knowledge = any(op.domain == "knowledge" for op in ops) and knowledge_base_empty(ctx)
    bound: dict[str, BoundTool] = {}
    for op in ops:
        if skip_knowledge and op.domain == "knowledge":
            continue
        kind: ToolKind = "read" if op.kind == "read" else "preview"
        bound[op.tool_name] = BoundTool(op.tool_name, kind, op, guard(op, ctx, kind, plan))
    return bound
