"""`opsgraph jobs run NAME`: one scheduled job now (`jobs.scheduled`), its report printed."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from opsgraph.cli.shared import Subcommands, add_json, out, store
from opsgraph.errors import BadInput


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
    store()
    report = run_job(name, tenant=args.tenant)
    if args.export_evals is not None:
        from opsgraph.jobs.few_shot_export import write_dataset
        from opsgraph.jobs.scheduled import job_scopes

        report["exported"] = write_dataset(job_scopes(args.tenant), Path(args.export_evals))
    out(args, report, _human_job)
    return 0


def add_jobs_command(sub: Subcommands) -> None:
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
    add_json(p)
    p.set_defaults(func=cmd_jobs_run)
