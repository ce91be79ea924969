"""The scripted requests the bench runs, and the reference times they are judged against.

Every task uses a read-only query agent (members search: `members.lookup`) so no approval
pause is involved. A script is the scripted-model format (docs/reference.md); the critical path
and the floors are computed from the same dict the model answers from.
"""

from __future__ import annotations

from typing import Any

MEMBERS = ("Jane Smith", "Tom Baker", "Raj Mehta", "Emily Chen", "Marcus Reid",
           "Fatima Al-Sayed", "Siobhan O'Connor", "Oliver Patel")
Script = dict[str, Any]


def task(tid: str, instruction: str, deps: list[str] | None = None) -> dict[str, Any]:
    """One planned task for the members search agent."""
    return {"id": tid, "domain": "members", "operation": "search", "instruction": instruction,
            "depends_on": deps or []}


def search_turn(query: str, delay_ms: int) -> dict[str, Any]:
    """A model turn that calls `members_search`."""
    return {"tool_calls": [{"name": "members_search", "args": {"query": query}}],
            "delay_ms": delay_ms}


def answer_turn(text: str, delay_ms: int) -> dict[str, Any]:
    """A model turn that answers."""
    return {"content": text, "delay_ms": delay_ms}


def fanout_script(n: int, delay_ms: int) -> Script:
    """`n` independent tasks, each one search: a query agent whose call succeeds hands its
    results to the synthesiser with no second turn (one model call per task)."""
    names = [MEMBERS[i % len(MEMBERS)] for i in range(n)]
    tasks = [task(f"t{i + 1}", f"Find the member {name}") for i, name in enumerate(names)]
    turns = {f"t{i + 1}": [search_turn(name, delay_ms)] for i, name in enumerate(names)}
    return {"plan": {"tasks": tasks}, "plan_delay_ms": delay_ms, "turns": turns,
            "synthesis": "Here is what I found about the members you asked for: "
                         + "; ".join(f"{name} is on the member list" for name in names) + ".",
            "synthesis_delay_ms": delay_ms}


def get_turn(member: str, delay_ms: int) -> dict[str, Any]:
    """A model turn that calls `members_get` (for a name no member has, a failed call:
    the agent gets another round)."""
    return {"tool_calls": [{"name": "members_get", "args": {"member": member}}],
            "delay_ms": delay_ms}


def skewed_script(delay_ms: int) -> Script:
    """One long task (3 turns: two failed look-ups, then an answer) beside a 3-task chain
    whose tasks answer in one turn each."""
    tasks = [task("long", "Find Jane Smithson, whatever her name is spelled"),
             task("c1", "Say which member to look at first"),
             task("c2", "Say which member comes next", ["c1"]),
             task("c3", "Say which member comes last", ["c2"])]
    turns = {"long": [get_turn("Jane Smithson", delay_ms), get_turn("Jayne Smithson", delay_ms),
                      answer_turn("No member of that name.", delay_ms)],
             "c1": [answer_turn("Start with Tom Baker.", delay_ms)],
             "c2": [answer_turn("Then Raj Mehta.", delay_ms)],
             "c3": [answer_turn("Finally Emily Chen.", delay_ms)]}
    return {"plan": {"tasks": tasks}, "plan_delay_ms": delay_ms, "turns": turns,
            "synthesis": "Jane Smith and Jane Smithson are members; the order is Tom Baker, "
                         "Raj Mehta, Emily Chen.", "synthesis_delay_ms": delay_ms}


def _task_ms(script: Script, tid: str) -> int:
    return sum(int(turn.get("delay_ms", 0)) for turn in script["turns"].get(tid, []))


def _finish_ms(script: Script) -> dict[str, int]:
    """When each task would finish if it started the moment its dependencies finished."""
    tasks = {t["id"]: t for t in script["plan"]["tasks"]}
    finish: dict[str, int] = {}

    def at(tid: str) -> int:
        if tid not in finish:
            start = max((at(dep) for dep in tasks[tid]["depends_on"]), default=0)
            finish[tid] = start + _task_ms(script, tid)
        return finish[tid]

    for tid in tasks:
        at(tid)
    return finish


def critical_path_ms(script: Script) -> int:
    """Plan call + the longest chain of model calls + synthesis."""
    chain = max(_finish_ms(script).values(), default=0)
    return int(script.get("plan_delay_ms", 0)) + chain + int(script.get("synthesis_delay_ms", 0))


def slot_floor_ms(script: Script, slots: int) -> float:
    """The best possible end to end with `slots` concurrent model calls (work ÷ slots bound)."""
    work = sum(_task_ms(script, t["id"]) for t in script["plan"]["tasks"])
    chain = max(_finish_ms(script).values(), default=0)
    return (int(script.get("plan_delay_ms", 0)) + max(float(chain), work / slots)
            + int(script.get("synthesis_delay_ms", 0)))


def superstep_ms(script: Script) -> int:
    """What a superstep scheduler (each dependency level waits for its slowest task) takes."""
    tasks = {t["id"]: t for t in script["plan"]["tasks"]}
    level: dict[str, int] = {}

    def depth(tid: str) -> int:
        if tid not in level:
            level[tid] = 1 + max((depth(dep) for dep in tasks[tid]["depends_on"]), default=-1)
        return level[tid]

    slowest: dict[int, int] = {}
    for tid in tasks:
        slowest[depth(tid)] = max(slowest.get(depth(tid), 0), _task_ms(script, tid))
    return (int(script.get("plan_delay_ms", 0)) + sum(slowest.values())
            + int(script.get("synthesis_delay_ms", 0)))


def model_calls(script: Script) -> int:
    """How many model calls one request of `script` makes (plan, turns, synthesis)."""
    return 2 + sum(len(turns) for turns in script["turns"].values())
