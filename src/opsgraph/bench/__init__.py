"""The performance benchmark (`opsgraph bench [--json]`): ratios measured side by side.

Scripted models of fixed latency drive the real graph on an embedded in-memory store; each
row compares a measurement with the target it is held to. Cases: (1) 8
independent tasks and (2) a skewed DAG, end to end ÷ critical path; (3) harness CPU at 0 ms
÷ a plain-asyncio floor, with a profile of what dominates; (4) the same request through
`langgraph-supervisor`; (5) checkpoint commits; (6) a burst of concurrent requests;
(7) time to the first events; (8) the ranker; (9) cold imports.
"""

from opsgraph.bench.report import Report, Row
from opsgraph.bench.suite import QUICK, BenchConfig, run_bench, run_suite

__all__ = ["QUICK", "BenchConfig", "Report", "Row", "run_bench", "run_suite"]
