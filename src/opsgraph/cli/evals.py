"""`opsgraph eval` and `opsgraph bench`: the eval suite (requests through the real graph,
scored; a knowledge set; a resolver set; two reports compared) and the performance
benchmark."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from opsgraph.cli.shared import Subcommands, add_json, out, store
from opsgraph.errors import BadInput

EVAL_MODEL_CHOICES = ("bedrock:<model-id> (AWS credentials)",
                      "openai:<model> (OPENAI_BASE_URL: Ollama, vLLM, a llama.cpp server)",
                      "llamacpp:<path.gguf>", "scripted:<file.yaml> (a scripted model file)")


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
    out(args, result, lambda r: render_compare(r) + (
        "\n\n" + render_judgement(r["judge"]) if "judge" in r else ""))
    return 0


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
        out(args, knowledge, render_knowledge)
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
    out(args, report, render_text)
    return 0 if report["passed"] else 1


def _cmd_resolve_eval(args: argparse.Namespace) -> int:
    """Score the resolver on labelled request sets (no model); exit 1 below the target."""
    from opsgraph.resolve.score import TARGET, is_resolve_set, render, run_set

    if not all(is_resolve_set(Path(p)) for p in args.dataset):
        raise BadInput("--dataset: a resolver set runs only with other resolver sets")
    db = store()
    reports = [run_set(db, Path(p)) for p in args.dataset]
    if args.report is not None:
        out_dir = Path(args.report)
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "report.json").write_text(json.dumps(reports, indent=2), encoding="utf-8")
        print(f"wrote {out_dir / 'report.json'}", file=sys.stderr)
    if len(reports) > 1:
        out(args, reports, lambda rs: "\n\n".join(render(r) for r in rs))
    else:
        out(args, reports[0], render)
    return 0 if all(r["accuracy"] >= TARGET for r in reports) else 1


def add_eval_command(sub: Subcommands) -> None:
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
    add_json(p)
    p.set_defaults(func=cmd_eval)


def cmd_bench(args: argparse.Namespace) -> int:
    from opsgraph.bench import run_bench

    code: int = run_bench(json_output=args.json)
    return code


def add_bench_command(sub: Subcommands) -> None:
    p = sub.add_parser("bench", help="the performance benchmark")
    add_json(p)
    p.set_defaults(func=cmd_bench)
