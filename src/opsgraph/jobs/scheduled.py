"""The scheduled jobs by name: what `POST /events` (a schedule's `{"job": NAME}`) and
`opsgraph jobs run NAME [--tenant T]` run. Each returns a JSON report.

    expire_approvals     every 5 minutes: expired, orphaned and resumed changes (all
                         tenants at once; `--tenant` is refused)
    promote_examples     nightly: few-shot promotion (`opsgraph.jobs.few_shot`)
    share_out_waitlists  nightly: waitlist share-out (`opsgraph.jobs.waitlist`)

The last two report `{"job", "tenants": {tenant: counts}}`.

Importing this module is light (keep-warm imports it): each job loads its code when it runs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from opsgraph.errors import BadInput
from opsgraph.jobs.waitlist import share_out_waitlists
from opsgraph.store.client import get_db
from opsgraph.store.scope import TenantScope

JOBS = ("expire_approvals", "promote_examples", "share_out_waitlists")
"""The names `opsgraph jobs run` takes and the schedules of `template.yaml` send."""


def job_name(name: str) -> str:
    """The job `name` denotes; BadInput naming the known jobs otherwise."""
    if name not in JOBS:
        raise BadInput(f"job: unknown job {name!r} (known: {', '.join(JOBS)})")
    return name


def job_scopes(tenant: str | None) -> list[TenantScope]:
    """The scopes a job runs over: the one tenant named (which must exist), else every
    tenant, in id order."""
    db = get_db()
    if tenant is not None:
        scope = TenantScope(db, tenant.strip())
        scope.require_tenant()
        return [scope]
    return [TenantScope(db, str(doc["_id"]))
            for doc in db["tenants"].find({}, {"_id": 1}, sort=[("_id", 1)])]


def run_job(name: str, tenant: str | None = None, now: datetime | None = None,
            ) -> dict[str, Any]:
    """Run one job now: `{"job": name, ...its report}`."""
    job = job_name(name)
    if job == "expire_approvals":
        if tenant is not None:
            raise BadInput("tenant: expire_approvals runs for every tenant at once; "
                           "run it without --tenant")
        from opsgraph.jobs.expiry_job import expire_and_notify  # heavy: langgraph (cold start)

        return {"job": job, **expire_and_notify()}
    scopes = job_scopes(tenant)
    if job == "promote_examples":
        from opsgraph.jobs.few_shot import promote_few_shot  # heavy: langgraph (cold start)

        return {"job": job, "tenants": promote_few_shot(scopes, now)}

    return {"job": job, "tenants": share_out_waitlists(scopes, now)}
