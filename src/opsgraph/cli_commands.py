"""The `opsgraph` subcommands beyond serve/seed/token: registry, runs, approvals, ops."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from opsgraph.errors import BadInput
from opsgraph.status_words import RUN_WORDS

AddPrincipal = Callable[[argparse.ArgumentParser, str | None], None]


def json_object(text: str, flag: str) -> dict[str, Any]:
    """A flag's JSON object, or BadInput naming the flag."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{flag}: invalid JSON ({exc.msg})") from None
    if not isinstance(value, dict):
        raise BadInput(f"{flag}: must be a JSON object")
    return value


def _cli() -> Any:
    from opsgraph import cli

    return cli


# --- registry ---------------------------------------------------------------------------

def cmd_agents_list(args: argparse.Namespace) -> int:
    from opsgraph.api.catalog import agent_row
    from opsgraph.registry.loader import get_registry

    rows = [agent_row(a) for a in get_registry().agents.values()]
    for row in rows:
        row.pop("description")
    _cli().out(args, rows, lambda rs: "\n".join(
        f"{r['name']:<36} {r['kind']:<7} {'ro' if r['read_only'] else 'rw'} "
        f"{','.join(r['operations'])}" for r in rs))
    return 0


def cmd_agents_validate(args: argparse.Namespace) -> int:
    from opsgraph.registry.loader import validate_paths

    problems = validate_paths([Path(p) for p in args.paths])
    for problem in problems:
        print(str(problem), file=sys.stderr)
    if problems:
        return 2
    print("valid", file=sys.stderr)
    return 0


def cmd_rank(args: argparse.Namespace) -> int:
    from opsgraph.registry.ranker import rank_agents

    if not args.request.strip():
        raise BadInput("REQUEST: must not be empty")
    if args.top < 1:
        raise BadInput("--top: must be at least 1")
    ranked = [r.to_json() for r in rank_agents(args.request, top_k=args.top)]
    _cli().out(args, ranked, lambda rs: "\n".join(
        f"{r['score']:.3f}  {r['agent']:<36} {r['domain']}" for r in rs))
    return 0


def add_agent_commands(sub: Any) -> None:
    agents = sub.add_parser("agents", help="the agent registry").add_subparsers(
        dest="agents_command", required=True)
    p = agents.add_parser("list", help="list the agents")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_agents_list)
    p = agents.add_parser("validate", help="validate spec files or directories")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.set_defaults(func=cmd_agents_validate)
    p = sub.add_parser("rank", help="rank agents for a request")
    p.add_argument("request", metavar="REQUEST")
    p.add_argument("--top", type=int, default=5)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rank)


def _clock(raw: str | None, zone: Any) -> Any:
    """--now as an aware datetime (a time without an offset is the venue's), or now."""
    from datetime import UTC, datetime

    if raw is None:
        return datetime.now(UTC)
    try:
        when = datetime.fromisoformat(raw.strip())
    except ValueError:
        raise BadInput(f"--now: {raw!r} is not an ISO 8601 date and time "
                       "(e.g. 2026-12-03T10:00:00+00:00)") from None
    return when if when.tzinfo else when.replace(tzinfo=zone)


def _thread_history(principal: Any, thread_id: str) -> list[str]:
    """The latest turns of a thread the caller may read, oldest first."""
    from opsgraph.api.threads import readable
    from opsgraph.engine.runner import thread_state
    from opsgraph.resolve.resolver import HISTORY_TURNS

    readable(principal, thread_id)
    _, state = thread_state(principal, thread_id)
    turns = [t["content"] for t in state.history if t["role"] != "summary"] if state else []
    return turns[-HISTORY_TURNS:]


def _mention_line(m: dict[str, Any]) -> str:
    what = m.get("value")
    if what is None and m.get("candidates"):
        what = "one of: " + "; ".join(f"{c['label']} [{c['value']}]" for c in m["candidates"])
    shown = f"{what}" + (f" to {m['end']}" if m.get("end") else "")
    label = f" ({m['label']})" if m.get("label") and m["label"] != m.get("value") else ""
    return f"{m['kind']:<9} {m['text']!r:<28} {shown if what else 'not found'}{label}"


def cmd_resolve(args: argparse.Namespace) -> int:
    from opsgraph.operations.base import Context
    from opsgraph.resolve import resolve_request
    from opsgraph.resolve.resolver import zone_of
    from opsgraph.store.scope import TenantScope

    if not args.text.strip():
        raise BadInput("TEXT: must not be empty")
    principal = _cli().principal_from(args, "staff")
    scope = TenantScope.of(principal, _cli().store())
    tenant = scope.require_tenant()
    timezone = str(tenant.get("timezone") or "UTC")
    now = _clock(args.now, zone_of(timezone))
    history = _thread_history(principal, args.thread) if args.thread else []
    found = resolve_request(Context(scope, principal, now), args.text, timezone=timezone,
                            now=now, history=history, tenant=tenant).to_json()
    _cli().out(args, found, lambda r: "\n".join(
        [f"now {r['now']} ({r['timezone']})"] + [_mention_line(m) for m in r["mentions"]]))
    return 0


def add_resolve_command(sub: Any, add_principal: AddPrincipal) -> None:
    p = sub.add_parser("resolve", help="what code understands in a request (no model)")
    p.add_argument("text", metavar="TEXT")
    add_principal(p, "staff")
    p.add_argument("--thread", default=None, metavar="ID",
                   help="read that thread's latest turns for 'her', 'that booking', ...")
    p.add_argument("--now", default=None, metavar="ISO-8601", help="the clock (default: now)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_resolve)


# --- runs ---------------------------------------------------------------------------------

def print_events(args: argparse.Namespace, events: Iterable[Any]) -> int:
    """Print a run's events; exit 1 when the run failed."""
    status = "failed"
    for ev in events:
        if ev.event == "run_finished":
            status = ev.data["status"]
        if args.json:
            print(ev.to_json_line(), flush=True)
        else:
            _human_event(ev)
    return 1 if status == "failed" else 0


def _human_event(ev: Any) -> None:
    d = ev.data
    if ev.event == "token":
        print(d["text"], end="", flush=True)
    elif ev.event == "plan":
        for t in d["tasks"]:
            deps = f" after {', '.join(t['depends_on'])}" if t["depends_on"] else ""
            print(f"plan  {t['id']}: {t['domain']}.{t['operation']} → {t['agent']}{deps}")
    elif ev.event == "task_finished":  # in the words the API and the page use
        print(f"task  {d['task_id']} {d.get('status_label') or d['status']}")
    elif ev.event == "answer":
        if "waiting" in d or "withdrawn" in d:  # written by code, not streamed as tokens
            print(d["text"], end="")
        print()
        for s in d["sources"]:
            print(f"  source: {s['kind']} {s['id']} {s['title']}")
    elif ev.event == "approval_required":
        for c in d["changes"]:
            print(f"needs approval  {c['change_id']}: {c['summary']} (expires {c['expires_at']})")
    elif ev.event == "error":
        print(f"error  {d.get('code')}: {d.get('message')}", file=sys.stderr)
    elif ev.event == "run_finished":
        label = d.get("status_label")
        said = f": {label}" if label and label != RUN_WORDS.get(d["status"]) else ""
        print(f"run {d['status']}{said} (thread {d['thread_id']})")


def cmd_chat(args: argparse.Namespace) -> int:
    from opsgraph.engine.runner import stream_run
    from opsgraph.models.demo import script_for

    _cli().store()
    principal = _cli().principal_from(args, "staff")
    # demo mode: an example request runs on its own scripted model, as on the page
    model = args.model or script_for(principal, args.message)
    return print_events(args, stream_run(principal, args.message, thread_id=args.thread,
                                         model=model))


def add_run_commands(sub: Any, add_principal: AddPrincipal) -> None:
    p = sub.add_parser("chat", help="one run of the assistant")
    p.add_argument("message", metavar="MESSAGE")
    add_principal(p, "staff")
    p.add_argument("--channel", default="dashboard")
    p.add_argument("--thread", default=None)
    p.add_argument("--model", default=None, metavar="SPEC")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_chat)


# --- approvals ----------------------------------------------------------------------------

def cmd_approvals_list(args: argparse.Namespace) -> int:
    from opsgraph.approvals.pending import list_changes
    from opsgraph.store.scope import TenantScope

    _cli().store()
    principal = _cli().principal_from(args, "manager")
    rows = [c.to_json() for c in list_changes(TenantScope.of(principal), "pending")]
    _cli().out(args, rows, lambda rs: "\n".join(
        f"{r['change_id']}  {r['operation']:<28} {r['summary']}"
        + (f"  (waits for {', '.join(r['waits_for'])})" if r.get("waits_for") else "")
        + "".join(f"\n    {f['label']}: {f['old']} → {f['new']}" for f in r["fields"]
                  if f["changed"])
        for r in rs) or "none pending")
    return 0


def cmd_approvals_decide(args: argparse.Namespace) -> int:
    from opsgraph.engine.approval_flow import decide_and_resume

    _cli().store()
    principal = _cli().principal_from(args, "manager")
    values = None if args.values is None else json_object(args.values, "--values")
    events = decide_and_resume(principal, args.change_id, args.decision,
                               feedback=args.feedback, values=values, model=args.model)
    return print_events(args, events)


def add_approval_commands(sub: Any, add_principal: AddPrincipal) -> None:
    approvals = sub.add_parser("approvals", help="pending changes").add_subparsers(
        dest="approvals_command", required=True)
    p = approvals.add_parser("list", help="pending changes of a tenant")
    add_principal(p, "manager")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_approvals_list)
    p = approvals.add_parser("decide", help="decide a change and resume its run")
    p.add_argument("change_id", metavar="CHANGE_ID")
    p.add_argument("--decision", required=True,
                   choices=["approve", "reject", "revise", "edit"])
    p.add_argument("--feedback", default=None)
    p.add_argument("--values", default=None, metavar="JSON")
    add_principal(p, "manager")
    p.add_argument("--model", default=None, metavar="SPEC")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_approvals_decide)


# --- operations and bench -----------------------------------------------------------------

def cmd_ops_call(args: argparse.Namespace) -> int:
    from opsgraph.operations.direct import call_operation

    op_args = json_object(args.args, "--args")
    _cli().store()
    result = call_operation(_cli().principal_from(args, "staff"), args.op_id, op_args)
    _cli().out(args, result)
    return 0


def add_ops_commands(sub: Any, add_principal: AddPrincipal) -> None:
    ops = sub.add_parser("ops", help="operations").add_subparsers(dest="ops_command",
                                                                  required=True)
    p = ops.add_parser("call", help="run one operation directly")
    p.add_argument("op_id", metavar="OP_ID")
    p.add_argument("--args", required=True, metavar="JSON")
    add_principal(p, "staff")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_ops_call)


def cmd_bench(args: argparse.Namespace) -> int:
    from opsgraph.bench import run_bench

    code: int = run_bench(json_output=args.json)
    return code


def add_bench_command(sub: Any) -> None:
    p = sub.add_parser("bench", help="the performance benchmark")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_bench)


# --- inbound email and eval ---------------------------------------------------------------

def _read_email_file(path: Path) -> bytes:
    if not path.exists():
        raise BadInput(f"{path}: no such file")
    if not path.is_file():
        raise BadInput(f"{path}: not a file")
    try:
        return path.read_bytes()
    except OSError as exc:
        raise BadInput(f"{path}: cannot read ({exc.strerror or exc})") from None


def _human_ingest(result: dict[str, Any]) -> str:
    lines = [f"{'existing ' if result['duplicate'] else ''}draft {result['draft_id']} "
             f"(run {result['status']}, thread {result['thread_id']})"]
    if result["draft"]:
        d = result["draft"]
        lines += [f"To: {d['to']}", f"Subject: {d['subject']}", "", d["body"], ""]
    lines += [f"denied  {t['task_id']} {t['operation']}: {t['reason']}" for t in result["denied"]]
    lines += [f"error  {e.get('code')}: {e.get('message')}" for e in result["errors"]]
    lines.append(f"pending changes {result['pending_changes']}, writes {result['writes']}")
    return "\n".join(lines)


def cmd_email_ingest(args: argparse.Namespace) -> int:
    """Ingest an RFC 822 file read-only; exit 1 when the run failed or anything was written."""
    from opsgraph.jobs.inbound_email import ingest_email, parse_email
    from opsgraph.models.spec import parse_model_spec

    raw = _read_email_file(Path(args.path))
    parse_email(raw, args.path)  # bad input fails before the store starts
    if args.model is not None:
        parse_model_spec(args.model)
    _cli().store()
    result = ingest_email(args.tenant, raw, model=args.model, source=args.path)
    _cli().out(args, result, _human_ingest)
    clean = result["pending_changes"] == 0 and result["writes"] == 0
    return 0 if clean and result["status"] == "completed" else 1


def add_email_command(sub: Any) -> None:
    """`opsgraph email ingest PATH [--tenant T] [--model SPEC] [--json]`.

    No --user/--role: an email runs as its sender, staff, on the read-only email channel.
    """
    email = sub.add_parser("email", help="inbound email").add_subparsers(
        dest="email_command", required=True)
    p = email.add_parser("ingest", help="draft a reply to an RFC 822 file (read-only)")
    p.add_argument("path", metavar="PATH")
    p.add_argument("--tenant", default="demo")
    p.add_argument("--model", default=None, metavar="SPEC")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_email_ingest)


def _cmd_compare(args: argparse.Namespace) -> int:
    from opsgraph.evals import (
        compare_reports,
        judge_reports,
        read_report,
        render_compare,
        render_judgement,
    )

    first, second = (read_report(Path(p)) for p in args.compare)
    result = compare_reports(first, second)
    if args.judge is not None:
        result["judge"] = judge_reports(first, second, args.judge,
                                        concurrency=args.concurrency)
    _cli().out(args, result, lambda r: render_compare(r) + (
        "\n\n" + render_judgement(r["judge"]) if "judge" in r else ""))
    return 0


EVAL_MODEL_CHOICES = ("bedrock:<model-id> (AWS credentials)",
                      "openai:<model> (OPENAI_BASE_URL: Ollama, vLLM, a llama.cpp server)",
                      "llamacpp:<path.gguf>", "scripted:<file.yaml> (a scripted model file)")


def _check_eval_model(model: str | None) -> None:
    """The suite needs a model: in demo mode (none configured or reachable) `--model` must
    name one, rather than the suite failing case by case on demo mode's examples."""
    from opsgraph.models.auto import model_choice

    if model is None and model_choice().mode == "demo":
        raise BadInput("--model: the eval suite needs a model, and none is configured or "
                       "reachable (demo mode answers only its example requests). Name one: "
                       + "; ".join(f"--model {c}" for c in EVAL_MODEL_CHOICES)
                       + "; or set OPSGRAPH_MODEL")


def cmd_eval(args: argparse.Namespace) -> int:
    """Run the eval suite (exit 0: every dimension met its threshold, 1: one missed), or
    compare two reports (`--compare A B [--judge SPEC]`)."""
    from opsgraph.evals import render_text, run_suite, write_report

    if args.concurrency < 1:
        raise BadInput("--concurrency: must be at least 1")
    if args.compare is not None:
        return _cmd_compare(args)
    from opsgraph.resolve.score import is_resolve_set

    if args.dataset and any(is_resolve_set(Path(p)) for p in args.dataset):
        return _cmd_resolve_eval(args)
    _check_eval_model(args.model)
    from opsgraph.evals.knowledge_set import is_knowledge_set

    if args.dataset and any(is_knowledge_set(Path(p)) for p in args.dataset):
        from opsgraph.evals.knowledge_eval import render_text as render_knowledge
        from opsgraph.evals.knowledge_eval import run_knowledge_eval

        if len(args.dataset) > 1:
            raise BadInput("--dataset: a knowledge set runs alone, with no other dataset")
        if args.judge is not None:
            raise BadInput("--judge: judges the answers of two reports; use it with --compare")
        knowledge = run_knowledge_eval(
            Path(args.dataset[0]), model=args.model, system=args.system or "both",
            split=args.split, limit=args.limit,
            report_dir=Path(args.report) if args.report is not None else None,
            progress=sys.stderr)
        if args.report is not None:
            print(f"wrote {Path(args.report) / 'report.json'} and report.md", file=sys.stderr)
        _cli().out(args, knowledge, render_knowledge)
        return 0
    if args.system is not None or args.limit is not None:
        raise BadInput("--system and --limit: only with a knowledge set as --dataset")
    if args.judge is not None:
        raise BadInput("--judge: judges the answers of two reports; use it with --compare")
    datasets = [Path(p) for p in args.dataset] if args.dataset else None
    journal = Path(args.report) / "cases.jsonl" if args.report is not None else None
    report = run_suite(datasets, model=args.model, split=args.split,
                       concurrency=args.concurrency, progress=sys.stderr, journal=journal)
    if args.report is not None:
        for path in write_report(report, Path(args.report)):
            print(f"wrote {path}", file=sys.stderr)
    _cli().out(args, report, render_text)
    return 0 if report["passed"] else 1


def _cmd_resolve_eval(args: argparse.Namespace) -> int:
    """Score the resolver on labelled request sets (no model); exit 1 below the target."""
    from opsgraph.resolve.score import TARGET, is_resolve_set, render, run_set

    if not all(is_resolve_set(Path(p)) for p in args.dataset):
        raise BadInput("--dataset: a resolver set runs only with other resolver sets")
    db = _cli().store()
    reports = [run_set(db, Path(p)) for p in args.dataset]
    if args.report is not None:
        out_dir = Path(args.report)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "report.json").write_text(json.dumps(reports, indent=2), encoding="utf-8")
        print(f"wrote {out_dir / 'report.json'}", file=sys.stderr)
    _cli().out(args, reports if len(reports) > 1 else reports[0],
               lambda r: "\n\n".join(render(x) for x in (r if isinstance(r, list) else [r])))
    return 0 if all(r["accuracy"] >= TARGET for r in reports) else 1


def add_eval_command(sub: Any) -> None:
    """`opsgraph eval [--model SPEC] [--dataset PATH] [--split all|dev|heldout]
    [--report DIR] [--compare A.json B.json [--judge SPEC]] [--concurrency N] [--json]
    [--system agent|baseline|both] [--limit N]` (the last two: a knowledge set only)."""
    p = sub.add_parser("eval", help="the eval suite: requests through the real graph, scored "
                                    "on eight dimensions")
    p.add_argument("--model", default=None, metavar="SPEC",
                   help="the model every stage uses (default: OPSGRAPH_MODEL)")
    p.add_argument("--dataset", action="append", default=None, metavar="PATH",
                   help="a case file or folder (repeatable; default: "
                        "evals/datasets/assistant)")
    p.add_argument("--split", default="all", choices=["all", "dev", "heldout"])
    p.add_argument("--report", default=None, metavar="DIR",
                   help="write report.json and report.md here")
    p.add_argument("--compare", nargs=2, default=None, metavar=("A.json", "B.json"),
                   help="compare two report.json files instead of running")
    p.add_argument("--judge", default=None, metavar="SPEC",
                   help="with --compare: a model judges the two reports' answers blind")
    p.add_argument("--concurrency", type=int, default=2, metavar="N",
                   help="cases (or judgements) at once (default 2)")
    p.add_argument("--system", default=None,
                   choices=["agent", "knowledge_agent", "baseline", "both", "all"],
                   help="with a knowledge set: the assistant (planner + knowledge agents), "
                        "the knowledge agent alone (no planner), the 'retrieve top-5 + "
                        "answer' baseline; both (the assistant and the baseline, the "
                        "default) or all three side by side")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="with a knowledge set: at most N questions, taken in turn from "
                        "each kind")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_eval)


# --- scheduled jobs -----------------------------------------------------------------------

def _human_job(report: dict[str, Any]) -> str:
    if "tenants" not in report:
        return "\n".join(f"{k} {v}" for k, v in report.items())
    lines = [f"{report['job']}"]
    for tenant, counts in report["tenants"].items():
        lines.append(f"  {tenant}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    if "exported" in report:
        lines.append(f"exported {report['exported']['cases']} eval cases to "
                     f"{report['exported']['path']}")
    return "\n".join(lines)


def cmd_jobs_run(args: argparse.Namespace) -> int:
    """Run one scheduled job now and print its report."""
    from opsgraph.jobs.scheduled import job_name, run_job

    name = job_name(args.name)  # bad input fails before the store starts
    if args.export_evals is not None and name != "promote_examples":
        raise BadInput(f"--export-evals: only promote_examples has examples to export, "
                       f"not {name}")
    _cli().store()
    report = run_job(name, tenant=args.tenant)
    if args.export_evals is not None:
        from opsgraph.jobs.few_shot_export import write_dataset
        from opsgraph.jobs.scheduled import job_scopes

        report["exported"] = write_dataset(job_scopes(args.tenant), Path(args.export_evals))
    _cli().out(args, report, _human_job)
    return 0


def add_jobs_command(sub: Any) -> None:
    """`opsgraph jobs run NAME [--tenant T] [--json]`."""
    jobs = sub.add_parser("jobs", help="scheduled jobs").add_subparsers(
        dest="jobs_command", required=True)
    p = jobs.add_parser("run", help="run a scheduled job now (expire_approvals, "
                                    "promote_examples, share_out_waitlists)")
    p.add_argument("name", metavar="NAME")
    p.add_argument("--tenant", default=None,
                   help="only this tenant (default: every tenant; expire_approvals always "
                        "runs for every tenant)")
    p.add_argument("--export-evals", default=None, metavar="PATH",
                   help="promote_examples: then write the promoted examples as an eval "
                        "dataset (opsgraph eval --dataset PATH)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_jobs_run)


# --- knowledge base -----------------------------------------------------------------------

def _human_kb(data: dict[str, Any]) -> str:
    if "documents" in data:
        rows = [f"{d['slug']:<32} v{d['version']:<3} {d['kind']:<8} {d['sections']:>3} sections"
                f"  {d['title']}" for d in data["documents"]]
        return "\n".join([*rows, f"knowledge version {data['knowledge_version']}"])
    done = data.get("changes", [data])
    verb = {(True, False): "added", (False, True): "removed", (False, False): "replaced"}
    return "\n".join(f"{verb[bool(c.get('created')), bool(c.get('removed'))]} {c['slug']} "
                     f"(knowledge version {c['knowledge_version']})" for c in done)


def cmd_kb_add(args: argparse.Namespace) -> int:
    """Add or replace documents: every file is checked before anything is written."""
    from opsgraph.knowledge.admin import put_document, read_file, slug_for
    from opsgraph.knowledge.documents import check_slug

    paths = [Path(p) for p in args.paths]
    if len(paths) > 1 and (args.slug or args.title):
        raise BadInput("--slug and --title name one document: pass one FILE with them")
    files = [(read_file(p), check_slug(args.slug) if args.slug else slug_for(p)) for p in paths]
    db = _cli().store()
    changes = [put_document(db, args.tenant.strip(), slug, text, kind=kind, title=args.title)
               for (text, kind), slug in files]
    _cli().out(args, changes[0] if len(changes) == 1 else {"changes": changes}, _human_kb)
    return 0


def cmd_kb_rm(args: argparse.Namespace) -> int:
    from opsgraph.knowledge.admin import remove_document

    db = _cli().store()
    _cli().out(args, remove_document(db, args.tenant.strip(), args.slug), _human_kb)
    return 0


def cmd_kb_list(args: argparse.Namespace) -> int:
    from opsgraph.knowledge.admin import list_documents

    db = _cli().store()
    _cli().out(args, list_documents(db, args.tenant.strip()), _human_kb)
    return 0


def add_kb_command(sub: Any) -> None:
    """`opsgraph kb add FILE... [--slug S] [--title T] | rm SLUG | list [--tenant T] [--json]`."""
    kb = sub.add_parser("kb", help="the tenant's knowledge documents").add_subparsers(
        dest="kb_command", required=True)
    p = kb.add_parser("add", help="add or replace documents (.md or .txt, at most 1 MiB)")
    p.add_argument("paths", nargs="+", metavar="FILE")
    p.add_argument("--slug", default=None, help="default: the file name without its suffix")
    p.add_argument("--title", default=None, help="default: the first '# ' heading")
    p.set_defaults(func=cmd_kb_add)
    p = kb.add_parser("rm", help="remove a document")
    p.add_argument("slug", metavar="SLUG")
    p.set_defaults(func=cmd_kb_rm)
    p = kb.add_parser("list", help="the documents with their versions")
    p.set_defaults(func=cmd_kb_list)
    for p in kb.choices.values():
        p.add_argument("--tenant", default="demo")
        p.add_argument("--json", action="store_true")
