"""The caller named by "me", "my", "I": a member's own member record ("book it for me",
"cancel my booking"), a staff member's own staff record ("put me on Sunday's shift"); not
"me" as the one asked or told ("she asked me to").

Read once, after the named records: the words are claimed so no other finder reads them.
A caller with no record of their own (a manager signed in as `alex`) is named by nothing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from opsgraph.operations.access import caller_member, is_staff
from opsgraph.operations.base import Context
from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.tokens import Claimed

_SELF = re.compile(r"\b(?:me|my|myself|mine)\b|\bI\b", re.IGNORECASE)
# "she asked me to", "he told me": the caller as the one spoken to, not the one the change
# is for ("register jane smith for the workshop, she asked me to" registers Jane, not me)
_SPOKEN_TO = re.compile(r"\b(?:asked|asks|ask|told|tells|tell|reminded|emailed|texted|"
                        r"messaged|called|rang|begged|wants|wanted)\s+$", re.IGNORECASE)


def find_self(ctx: Context, text: str, claimed: Claimed,
              found: Sequence[Mention] = ()) -> list[Mention]:
    """One mention of the caller's own record at the first word that names them, unless
    `found` (what other finders read) names it already ("my booking, Jane Smith")."""
    said = next((m for m in _SELF.finditer(text)
                 if not claimed.overlaps(m.start(), m.end())
                 and not (m.group().lower() == "me" and _SPOKEN_TO.search(text[:m.start()]))),
                None)
    if said is None or ctx.principal.is_visitor:
        return []
    if is_staff(ctx.principal):
        doc = ctx.scope["staff"].find_one({"_id": ctx.principal.user_id},
                                          projection={"name": 1})
        kind = "staff"
    else:
        doc = caller_member(ctx)
        kind = "member"
    if doc is None or any(m.value == str(doc["_id"]) for m in found):
        return []
    claimed.add(said.start(), said.end())
    return [Mention(said.group(), kind, str(doc["_id"]), str(doc.get("name") or doc["_id"]),
                    start=said.start())]
