"""Tools: operations exposed to a model, bound per request, guarded, gated by prerequisites."""

from opsgraph.tools.binding import bind_agent_tools
from opsgraph.tools.contract import BoundTool, Proposal, ToolKind, ToolOutcome
from opsgraph.tools.prerequisites import frontier

__all__ = [
    "BoundTool", "Proposal", "ToolKind", "ToolOutcome", "bind_agent_tools", "frontier",
]
