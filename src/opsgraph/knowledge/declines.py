"""Whether an answer declines: it says it does not know, points the asker elsewhere, or asks
back. Read by the knowledge answer's check (a declining answer may name what the knowledge
base never mentions: "the sauna's hours are not covered") and by the knowledge eval's scorer
(an unanswerable question is answered right only by declining).
"""

from __future__ import annotations

import re

_DECLINES = re.compile("|".join((
    r"\b(?:do not|don't|does not|doesn't|did not|didn't|could not|couldn't|cannot|can't|"
    r"am unable to|unable to|wasn't able to|was not able to|not able to)\s+"
    r"(?:know|find|see|say|mention|cover|specify|state|include|list|contain|have|locate|"
    r"confirm|answer|provide)",
    r"\bno (?:information|details|mention|record|data|price|answer)\b",
    r"\b(?:cannot|can't|could not|couldn't) be (?:found|determined|confirmed)\b",
    r"\bnot (?:mentioned|covered|stated|specified|listed|included|documented|available|"
    r"found|provided|given|in the (?:knowledge|documents|passages|policy|policies))\b",
    r"\bnothing (?:about|on|in)\b",
    r"\b(?:please )?(?:ask|contact|check with|speak to) (?:at )?(?:reception|the club manager|"
    r"the duty manager|a member of staff|staff)\b",
    r"\bi'?m not sure\b", r"\bnot sure\b",
    r"\b(?:could|can|would) you (?:clarify|tell me|confirm|say)\b",
    r"\bdo you mean\b",
)), re.IGNORECASE)


def declines(answer: str) -> bool:
    """The answer says it does not know, or points the asker elsewhere, or asks back."""
    return bool(_DECLINES.search(answer)) or answer.rstrip().endswith("?")
