"""The knowledge eval: the knowledge agent against "retrieve top-k + answer", side by side.

Both systems answer the same questions on the same model, in one scratch database seeded
with the demo tenant, as staff of `demo`:

- **agent**: one new thread of the real supervisor graph (`stream_run`): planning, the
  knowledge agents and their tools, synthesis. What it read is everything its tasks
  returned (`task_finished`); its model calls are the run's `usage`.
- **knowledge_agent**: the knowledge agent alone, no planner: a one-step harness (an
  `agent` step running `knowledge.faq`) on a new thread — its pre-search, its tools, its
  answer passed on as it is. What separates it from **agent** is the planner's routing.
- **baseline**: the hybrid search's top `K` entries for the question (for a follow-up, the
  earlier user turns and the question) handed with the question to one model call.

Questions run one at a time, each by both systems before the next, so a run stopped
halfway (a long real-model run) has answered the same questions with both; the report is
rewritten after every question for the same reason. Scoring is `knowledge_score`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from opsgraph.engine.runner import stream_run
from opsgraph.errors import BadInput
from opsgraph.evals.knowledge_score import AnswerScore, score_answer
from opsgraph.evals.knowledge_set import (
    KINDS,
    Question,
    load_questions,
    missing_sources,
    spread,
)
from opsgraph.evals.progress import Progress
from opsgraph.evals.sandbox import scratch_database
from opsgraph.evals.suite import checked_model
from opsgraph.harness.spec import HarnessDoc
from opsgraph.knowledge.search import index_for
from opsgraph.models.factory import get_chat_model
from opsgraph.principal import Channel, Principal, Role
from opsgraph.store.scope import TenantScope

TENANT = "demo"
STAFF = Principal(TENANT, "alex", frozenset({Role.STAFF}), Channel.DASHBOARD)
K = 5
SYSTEMS: tuple[str, ...] = ("agent", "knowledge_agent", "baseline")
CHOICES: dict[str, tuple[str, ...]] = {
    **{name: (name,) for name in SYSTEMS}, "both": ("agent", "baseline"), "all": SYSTEMS}
"""`--system`: one system, `both` (the supervisor and the baseline) or `all` three."""
KNOWLEDGE_AGENT = "knowledge.faq"
BASELINE_PROMPT = (
    "You answer questions from staff and members of a sports club using only the passages "
    "from the club's knowledge base given with the question. Give the specific numbers, "
    "deadlines and conditions the passages state. If the passages do not answer the "
    "question, say that you do not know; never guess.")


@dataclass(slots=True)
class Answer:
    """What one system did with one question."""

    text: str
    read: list[str]
    sources: list[str]
    model_calls: int
    seconds: float = 0.0
    error: str | None = None


@dataclass(slots=True)
class Outcome:
    """One question answered by one system, and its score."""

    question: Question
    system: str
    answer: Answer
    score: AnswerScore = field(default_factory=lambda: AnswerScore(False, False))

    def to_json(self) -> dict[str, Any]:
        q, a = self.question, self.answer
        return {"id": q.id, "kind": q.kind, "split": q.split, "system": self.system,
                "question": q.question, "history": [t.model_dump() for t in q.history],
                "answer": a.text, **self.score.to_json(),
                "model_calls": a.model_calls, "seconds": round(a.seconds, 3),
                "sources": a.sources, "read_chars": sum(len(t) for t in a.read),
                "error": a.error}


# ── the two systems ──────────────────────────────────────────────────────────────────────

def _event(event: Any) -> tuple[str, Mapping[str, Any]]:
    if isinstance(event, Mapping):
        return str(event.get("event", "")), event.get("data") or {}
    return str(event.event), event.data


def agent_alone() -> tuple[int, Any]:
    """The one-step harness that runs the knowledge agent without the planner."""
    return -1, HarnessDoc.model_validate({"steps": [{
        "id": "knowledge", "type": "agent", "agent": KNOWLEDGE_AGENT, "title": "Answer",
        "description": "The knowledge agent answers the question, no planner.",
        "layer": "knowledge"}]})


def _texts(value: Any) -> list[str]:
    """The text a task's record holds, as the model read it: every string in it, and a
    tool's output (kept as a JSON string) opened up, so that a line break before "12 hours"
    is a line break, not the "\\n12" that the figures reader takes for an identifier."""
    if isinstance(value, Mapping):
        return [t for v in value.values() for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return _texts(json.loads(value.removesuffix("…")))
        except ValueError:
            return [value.replace("\\n", "\n").replace('\\"', '"')]  # trimmed
    return [str(value)] if value is not None else []


def ask_agent(question: Question, model: str, *, alone: bool = False) -> Answer:
    """One run on a new thread (the question's earlier turns seed it): the supervisor's,
    or with `alone` the knowledge agent's without the planner."""
    history = [t.model_dump() for t in question.history] or None
    text, read, sources, calls, errors = "", [], [], 0, []
    for event in stream_run(STAFF, question.question, model=model, history=history,
                            harness=agent_alone() if alone else None):
        name, data = _event(event)
        if name == "task_finished":
            read.extend(_texts(data))
        elif name == "answer":
            text = str(data.get("text") or "")
            sources = [str(s.get("id") or s.get("title") or s) for s in data.get("sources") or []]
        elif name == "error":
            errors.append(f"{data.get('code')}: {data.get('message')}")
        elif name == "run_finished":
            calls = int((data.get("usage") or {}).get("model_calls", 0))
    return Answer(text, read, sources, calls, error="; ".join(errors) or None)


def baseline_query(question: Question) -> str:
    """What the baseline searches for: the user's turns so far and the question."""
    return " ".join([t.content for t in question.history if t.role == "user"]
                    + [question.question])


def ask_baseline(question: Question, model: str, scope: TenantScope) -> Answer:
    """The top-K search results and the question in one model call."""

    hits = index_for(scope).search(baseline_query(question), limit=K)
    passages = [f"[{h.entry.id}] {h.entry.title}\n{h.entry.text}" for h in hits]
    earlier: list[BaseMessage] = [
        HumanMessage(t.content) if t.role == "user" else AIMessage(t.content)
        for t in question.history]
    prompt = ("Passages:\n\n" + "\n\n".join(passages or ["(none found)"])
              + f"\n\nQuestion: {question.question}")
    reply = get_chat_model(model).invoke(
        [SystemMessage(BASELINE_PROMPT), *earlier, HumanMessage(prompt)],
        config={"metadata": {"opsgraph_stage": "synthesise"}})
    return Answer(str(reply.text), passages, [h.entry.id for h in hits], 1)


def answer(system: str, question: Question, model: str, scope: TenantScope) -> Outcome:
    """Ask one system, time it and score the answer; never raises (an error is recorded
    and scores as neither correct nor a fabrication)."""
    started = time.perf_counter()
    try:
        got = (ask_baseline(question, model, scope) if system == "baseline"
               else ask_agent(question, model, alone=system == "knowledge_agent"))
    except Exception as exc:
        got = Answer("", [], [], 0, error=f"{type(exc).__name__}: {exc}")
    got.seconds = time.perf_counter() - started
    if not got.text:
        return Outcome(question, system, got, AnswerScore(False, False, ["no answer"]))
    score = score_answer(got.text, facts=question.facts,
                         unanswerable=question.kind == "unanswerable", read=got.read,
                         asked=question.asked, forbidden=question.forbidden)
    return Outcome(question, system, got, score)


# ── figures and the report ───────────────────────────────────────────────────────────────

def figures(cases: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Answers, correct, fabrications, errors, model calls and seconds per answer."""
    rows = list(cases)
    n = len(rows)

    def per_answer(key: str) -> float | None:
        return round(sum(float(r[key]) for r in rows) / n, 2) if n else None

    return {"answers": n, "correct": sum(bool(r["correct"]) for r in rows),
            "fabrications": sum(bool(r["fabrication"]) for r in rows),
            "errored": sum(r["error"] is not None and not r["answer"] for r in rows),
            "model_calls_per_answer": per_answer("model_calls"),
            "seconds_per_answer": per_answer("seconds")}


def build_report(cases: list[dict[str, Any]], *, dataset: str, model: str, split: str,
                 questions: int, systems: Iterable[str]) -> dict[str, Any]:
    """The report document: per system its figures overall and by kind, and every case."""
    out: dict[str, Any] = {}
    for system in systems:
        mine = [c for c in cases if c["system"] == system]
        out[system] = {**figures(mine), "by_kind": {
            kind: figures(c for c in mine if c["kind"] == kind) for kind in KINDS}}
    answered = {c["id"] for c in cases}
    return {"kind": "knowledge", "dataset": dataset, "model": model, "split": split,
            "questions": questions, "answered": len(answered),
            "complete": len(answered) == questions, "systems": out, "cases": cases}


def _rate(part: int, whole: int) -> str:
    return f"{part} ({100 * part / whole:.0f}%)" if whole else "0"


def _rows(report: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for system, figs in report["systems"].items():
        for kind, f in [("all", figs), *figs["by_kind"].items()]:
            if not f["answers"]:
                continue
            rows.append([system, kind, str(f["answers"]), _rate(f["correct"], f["answers"]),
                         _rate(f["fabrications"], f["answers"]),
                         f"{f['model_calls_per_answer']:.2f}", f"{f['seconds_per_answer']:.1f}"])
    return rows


HEADER = ["system", "kind", "answers", "correct", "fabrications", "model calls/answer",
          "seconds/answer"]


def render_text(report: Mapping[str, Any]) -> str:
    """The figures as a plain table."""
    rows = [HEADER, *_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = [f"knowledge eval: {report['answered']} of {report['questions']} questions "
             f"({report['dataset']}, split {report['split']}), model {report['model']}"]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in rows]
    return "\n".join(lines)


def render_markdown(report: Mapping[str, Any]) -> str:
    """report.md: the figures table, then every answer that was wrong or a fabrication."""
    lines = [f"# Knowledge eval — {report['model']}", "",
             f"{report['answered']} of {report['questions']} questions of "
             f"`{report['dataset']}` (split {report['split']})"
             + ("" if report["complete"] else " — stopped before the end") + ".", "",
             "| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(r) + " |" for r in _rows(report)]
    lines += ["", "## Answers not correct or with a fabrication", ""]
    for c in report["cases"]:
        if c["correct"] and not c["fabrication"]:
            continue
        verdict = "fabrication" if c["fabrication"] else "wrong"
        said = " ".join(str(c["answer"] or c["error"] or "").split())
        lines.append(f"- **{c['id']}** ({c['system']}, {verdict}: "
                     f"{'; '.join(c['reasons']) or c['error']}) — {c['question']} → {said}")
    return "\n".join(lines) + "\n"


def write_report(report: Mapping[str, Any], folder: Path) -> list[Path]:
    """report.json and report.md in `folder` (created)."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        paths = [folder / "report.json", folder / "report.md"]
        paths[0].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n",
                            encoding="utf-8")
        paths[1].write_text(render_markdown(report), encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"{folder}: --report: cannot write ({exc})") from None
    return paths


# ── the run ──────────────────────────────────────────────────────────────────────────────

def run_knowledge_eval(dataset: Path, *, model: str | None = None, system: str = "both",
                       split: str = "all", limit: int | None = None,
                       report_dir: Path | None = None,
                       progress: TextIO | None = None) -> dict[str, Any]:
    """Run the question set through the chosen systems and return the report; with
    `report_dir`, report.json and report.md are rewritten after every question."""
    if system not in CHOICES:
        raise BadInput(f"--system: one of {', '.join(CHOICES)}")
    systems = CHOICES[system]
    spec = checked_model(model)
    questions = spread(load_questions(dataset, split=split), limit)
    if not questions:
        raise BadInput(f"--split: the dataset has no {split} questions")
    cases: list[dict[str, Any]] = []

    def report() -> dict[str, Any]:
        return build_report(cases, dataset=str(dataset), model=spec, split=split,
                            questions=len(questions), systems=systems)

    bar = Progress(len(questions) * len(systems), progress)
    with scratch_database() as db:
        scope = TenantScope(db, TENANT)
        missing = missing_sources(questions, {e.id for e in index_for(scope).entries})
        if missing:
            raise BadInput(f"{dataset}: sources the demo knowledge base lacks: "
                           + ", ".join(missing))
        try:
            for question in questions:
                for name in systems:
                    outcome = answer(name, question, spec, scope)
                    cases.append(outcome.to_json())
                    bar.advance(f"{name} {question.id}", outcome.score.correct,
                                outcome.answer.seconds)
                if report_dir is not None:
                    write_report(report(), report_dir)
        finally:
            bar.close()
    return report()

