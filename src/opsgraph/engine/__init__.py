"""The supervisor runtime: tool loop, plan, graph nodes, runner, events."""
