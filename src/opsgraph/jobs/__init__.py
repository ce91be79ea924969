"""Jobs: work that starts outside a chat (an inbound email, a schedule, a queue record).

Importing this package stays light: the graph and models load only when a job runs.
"""

from opsgraph.jobs.inbound_email import (
    InboundEmail,
    email_principal,
    ingest_email,
    parse_email,
)

__all__ = ["InboundEmail", "email_principal", "ingest_email", "parse_email"]
