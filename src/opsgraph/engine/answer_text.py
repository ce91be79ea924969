"""The words of an answer that code writes, never the model: what happened to each change
and each task that did not do its job (`status_lines`), the sources the agents read
(`collect_sources`), what a paused run says (`pause_answer`) and the warning of a run that
fell back to the built-in harness (`fallback_warning`). A leaf of the engine: the nodes
that answer (synthesise, execute, the harness) all read it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Interrupt

from opsgraph.engine.state import HarnessState, TaskResult
from opsgraph.engine.task_outcome import agent_words


def collect_sources(results: Mapping[str, TaskResult]) -> list[dict[str, Any]]:
    """Every record and document the agents actually read, once, in task order."""
    seen: set[tuple[str, str]] = set()
    sources = []
    for result in results.values():
        for src in result.sources:
            key = (src["kind"], src["id"])
            if key not in seen:
                seen.add(key)
                sources.append(src)
    return sources


def _quoted(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return "“" + (text if len(text) <= limit else text[: limit - 1] + "…") + "”"


def _change_line(change: dict[str, Any]) -> str | None:
    summary = change.get("summary") or change.get("operation", "the change")
    who = change.get("decided_by_name") or change.get("decided_by") or "a manager"
    outcome = change.get("outcome")
    if outcome == "applied":
        return f"Done: {summary} (approved by {who})."
    if outcome == "rejected":
        why = f": {change['feedback']}" if change.get("feedback") else ""
        return f"Not done: {summary} — rejected by {who}{why}."
    if outcome == "expired":
        return f"Not done: {summary} — the approval request expired."
    if outcome == "revise":
        return None  # a revised proposal follows in a later call (`_revised_alone`)
    if outcome == "withdrawn":
        why = f" — {change['reason']}" if change.get("reason") else ""
        return f"Withdrawn: {summary}{why}."
    return f"Not done: {summary} — it failed to apply ({change.get('error') or outcome})."


def _revised_alone(change: dict[str, Any]) -> str:
    """A change sent back for revision that no new proposal followed."""
    summary = change.get("summary") or change.get("operation", "the change")
    who = change.get("decided_by_name") or change.get("decided_by") or "a manager"
    why = f" ({change['feedback']})" if change.get("feedback") else ""
    return (f"Not done: {summary} — {who} asked for a revision{why}, and no revised "
            "change was proposed.")


def status_lines(results: Mapping[str, TaskResult]) -> list[str]:
    """What happened to every change and every task that did not complete, from the calls."""
    lines: list[str] = []
    for result in results.values():
        status = result.status
        what = _quoted(result.instruction or result.task_id)
        changes = [call["change"] for call in result.calls if "change" in call]
        for change in changes:
            line = _change_line(change)
            if line:
                lines.append(line)
        if changes and changes[-1].get("outcome") == "revise":
            lines.append(_revised_alone(changes[-1]))
        reason = result.error or ""
        if status == "no_proposal":
            said = agent_words(result.content)  # never its tool talk or our prompt's words
            tail = f" — the agent said: {said}" if said else ""
            lines.append(f"No change was proposed for {what}{tail}"
                         + ("" if said.endswith((".", "?", "!")) else "."))
        elif status == "denied":
            lines.append(f"Not allowed: {what} — {reason}.")
        elif status == "failed":
            lines.append(f"Could not complete {what}: {reason}.")
        elif status == "needs_input" and result.asking:
            lines.append(str(result.asking["question"]))
        elif status == "partial":
            lines.append(f"Only partly done: {what} — {reason}.")
        elif status == "skipped":
            lines.append(f"Skipped {what}: {reason}.")
    return lines


def pause_answer(results: Mapping[str, TaskResult], interrupts: list[Interrupt],
                 read: str = "") -> dict[str, Any]:
    """What a paused run tells the person who asked: what its finished reads found (`read`,
    checked as any answer is), then, in code's words, each card waiting, with its id, and
    every task that ended without doing its job."""
    cards = [i.value["card"] for i in interrupts
             if isinstance(i.value, dict) and "card" in i.value]
    lines = [f"Waiting for approval: {c['summary']} (card {c['change_id']})." for c in cards]
    lines += status_lines(results)
    text = "\n".join(lines)
    return {"text": f"{read}\n\n{text}" if read else text, "read": read,
            "waiting": [c["change_id"] for c in cards], "sources": collect_sources(results)}


def fallback_warning(state: HarnessState | None) -> dict[str, str]:
    """`{warning}` for the answer of a run whose harness version failed and fell back to
    the built-in harness; {} for every other run."""
    if state is None or state.fallback is None:
        return {}
    failed = state.fallback
    return {"warning": f"harness version {failed['version']} failed at step "
                       f"{failed['step']}; the built-in harness answered instead"}
