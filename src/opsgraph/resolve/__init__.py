"""The request resolver: what code understands in a request before any model call.

`resolve_request(ctx, text, timezone=..., now=..., history=...)` (`resolve.resolver`) finds
every mention of a member, staff member, resource, event, booking or invoice (through the
store's search keys), every date, time and range (relative to now in the venue's time zone),
amount, e-mail address and phone number, and resolves "her", "that booking", "the same time"
from the thread's earlier turns. Each `Mention` carries the record id or value, or the
`Candidate`s when several records match.

The package exports the mentions only: the resolver, with phonenumbers and rapidfuzz, is
about 50 ms of CPU to import, and code that only reads mentions (`resolve.slots`, the
engine's slot checks) must not pay for it.
"""

from opsgraph.resolve.mentions import KINDS, Candidate, Mention, Resolution

__all__ = ["KINDS", "Candidate", "Mention", "Resolution"]
