"""A resource named only by its kind, any one of which will do: "book me a court for thurs
evening", "either court is fine", "any studio free at 6?".

The request names no court, so every bookable resource of that kind (not closed for
maintenance) is a candidate, and code may pick the one that is free at the time asked
(engine.slot_reading). Only a booking agent's resource slot asks for this, so `opsgraph
resolve` (which reports what the words name) does not print it.
"""

from __future__ import annotations

import re

from opsgraph.operations.base import Context
from opsgraph.resolve.keys import label_of
from opsgraph.resolve.mentions import Candidate, Mention

_ANY = re.compile(r"\b(?:a|an|any|either|one\s+of\s+the|whichever)\s+(?P<kind>[a-z]+?)s?\b",
                  re.I)


def find_any_resource(ctx: Context, text: str) -> Mention | None:
    """The resources of the kind `text` names with "a", "any" or "either" ("a court"), as
    candidates, when the tenant has more than one bookable; else None."""
    kinds = {str(k).lower() for k in ctx.scope["resources"].distinct("kind")}
    for match in _ANY.finditer(text):
        kind = match.group("kind").lower()
        if kind not in kinds:
            continue
        docs = sorted(ctx.scope["resources"].find(
            {"kind": kind, "status": {"$ne": "maintenance"}}, projection={"name": 1}),
            key=lambda d: str(d.get("name", "")))
        if len(docs) < 2:
            return None
        return Mention(match.group(), "resource", start=match.start(),
                       candidates=tuple(Candidate(str(d["_id"]), label_of("resources", d))
                                        for d in docs))
    return None
