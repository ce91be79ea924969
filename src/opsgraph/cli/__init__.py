"""`opsgraph`: the command line (the reference is docs/reference.md). `--json` prints
machine-readable output to stdout; errors go to stderr with a non-zero exit (2 for bad
input). A reader that stops early (`opsgraph agents list | head`) ends it quietly.

This module builds the parser from the command groups and dispatches; each group is a
module of its own (`cli.harness`, `cli.drafts`, ...), and what they all share is
`cli.shared`, the package's leaf. A command imports what only it runs inside its own body,
so that one command does not pay another's cold start (the CLI is an entry module).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from opsgraph.cli import (
    approvals,
    catalogue,
    drafts,
    evals,
    harness,
    inbound_email,
    jobs,
    knowledge,
    ops,
    registry,
    resolve,
    runs,
    serve,
)
from opsgraph.errors import OpsgraphError

DESCRIPTION = """\
opsgraph: agents for an operations business, with every change approved by a manager.

`--json` prints machine-readable output to stdout; errors go to stderr with a non-zero
exit (2 for bad input). `opsgraph COMMAND --help` lists a command's options.

Model specs (--model, OPSGRAPH_MODEL): bedrock:<model-id>, openai:<model> (with
OPENAI_BASE_URL), llamacpp:<path.gguf>, scripted:<path.yaml|json>.
Store: MONGODB_URI, else an embedded one under OPSGRAPH_HOME (~/.local/share/opsgraph).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="opsgraph", description=DESCRIPTION,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    serve.add_serve_commands(sub)
    registry.add_agent_commands(sub)
    resolve.add_resolve_command(sub)
    runs.add_run_commands(sub)
    approvals.add_approval_commands(sub)
    ops.add_ops_commands(sub)
    evals.add_bench_command(sub)
    inbound_email.add_email_command(sub)
    evals.add_eval_command(sub)
    jobs.add_jobs_command(sub)
    knowledge.add_kb_command(sub)
    harness.add_harness_command(sub)
    drafts.add_drafts_command(sub)
    catalogue.add_catalogue_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    for arg in argv:  # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape)
        if any("\ud800" <= ch <= "\udfff" for ch in arg):
            print(f"error: argument {arg.encode('utf-8', 'replace').decode()!r} is not valid "
                  "UTF-8 text", file=sys.stderr)
            return 2
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except BrokenPipeError:
        _quiet_stdout()
        return 0
    except OpsgraphError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2 if 400 <= exc.status < 500 else 1
    except KeyboardInterrupt:
        return 130
    return code


def _quiet_stdout() -> None:
    """The reader of stdout has gone (`| head`): what is left to print goes nowhere, so the
    interpreter's last flush raises nothing either."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
