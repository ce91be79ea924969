"""The new values a request gives a member's record, read by code: "her surname's Byrne
now", "change his number to +44 7700 900999", "update her email to x@y.example", "pause
zara's membership", "move aisha onto premium", "cancel kai's membership".

Conservative on purpose: a value is read only when the words say plainly which field it is
(a phone number is the new phone, an address after "email … to" the new email, a surname after
"surname", a plan after "onto"/"to", a status from the verb said of the membership).
Anything else is left to the model (the slot stays unfilled), so a wrong reading never
becomes a card nobody asked for.
"""

from __future__ import annotations

import re

import phonenumbers

from opsgraph.resolve.mentions import Mention

_SURNAME = re.compile(
    r"\b(?:sur\s?name|last\s+name|family\s+name|married\s+name)(?:'s|’s|\s+is|\s+was)?\s+"
    r"(?:now\s+|changed\s+to\s+|(?:changed\s+)?to\s+|become\s+)?[\"“']?"
    r"(?P<new>[^\W\d_][\w'’-]*)", re.I)
_FULL_NAME = re.compile(
    r"\bname\s+(?:to|is\s+now|should\s+be|is\s+actually)\s+[\"“']?"
    r"(?P<new>[A-Z][\w'’-]+(?:\s+[A-Z][\w'’-]+)+)")
_NOT_A_NAME = frozenset({"now", "to", "is", "was", "changed", "become", "the", "her", "his",
                         "their", "spelt", "spelled", "wrong"})
_PLAN = re.compile(r"\b(?:onto|on\s+to|to|on)\s+(?:the\s+|a\s+)?(?P<plan>premium|off[\s-]?peak|"
                   r"junior|family|standard)\b", re.I)
_MEMBERSHIP = re.compile(r"\b(?:membership|account|plan)\b", re.I)
_STATUS = (  # first match wins: "unfreeze" before "freeze"
    ("active", re.compile(r"\b(?:un-?freeze|un-?pause|unfroze|re-?activate|"
                          r"resume|restart|reinstate|off\s+hold)", re.I)),
    ("paused", re.compile(r"\b(?:freeze|froze|pause|hold|suspend)", re.I)),
    ("cancelled", re.compile(r"\b(?:cancel|end|terminate|close)", re.I)),
)
_EMAIL_WORD = re.compile(  # "her email to …", "new email is …", "email address: …"
    r"(?:\bnew\s+(?:e-?mail|address)\b[^.?!@]{0,20}|"
    r"\b(?:e-?mail|address)\b[^.?!@]{0,20}?\b(?:to|is|now|as)\s*[:=]?|"
    r"\b(?:e-?mail|address)\s*[:=])\s*$", re.I)


def member_changes(text: str, mentions: tuple[Mention, ...], member_label: str | None
                   ) -> dict[str, str] | None:
    """The changes `text` gives the member named `member_label` (field → new value, as
    members.update takes them), or None when it gives none that code can read plainly."""
    changes: dict[str, str] = {}
    phones = [m for m in mentions if m.kind == "phone" and m.value and m.start >= 0]
    if len(phones) == 1:
        changes["phone"] = grouped(str(phones[0].value))
    emails = [m for m in mentions if m.kind == "email" and m.value and m.start >= 0
              and _EMAIL_WORD.search(text[:m.start])]
    if len(emails) == 1:
        changes["email"] = str(emails[0].value)
    name = _new_name(text, member_label)
    if name is not None:
        changes["name"] = name
    plan = _PLAN.search(text)
    if plan is not None and re.search(r"\b(?:move|switch|change|upgrade|downgrade|put|"
                                      r"membership|plan)\b", text, re.I):
        changes["membership"] = re.sub(r"[\s-]+", "_", plan.group("plan").lower()).replace(
            "offpeak", "off_peak")
    elif _MEMBERSHIP.search(text):
        status = next((value for value, words in _STATUS if words.search(text)), None)
        if status is not None:
            changes["status"] = status
    return changes or None


def grouped(e164: str) -> str:
    """An E.164 number as records keep phones: international, grouped (+44 7700 900123)."""
    try:
        number = phonenumbers.parse(e164, None)
    except phonenumbers.NumberParseException:
        return e164
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.INTERNATIONAL)


def _new_name(text: str, member_label: str | None) -> str | None:
    """The member's new full name: their first names with the surname the request gives,
    or a full name given whole ("change her name to Ana Lopes")."""
    whole = _FULL_NAME.search(text)
    if whole is not None:
        return whole.group("new")
    surname = _SURNAME.search(text)
    if surname is None or member_label is None:
        return None
    new = surname.group("new")
    if new.lower() in _NOT_A_NAME:
        return None
    first = member_label.split()[:-1]
    if not first:
        return None
    return " ".join([*first, new if not new.islower() else new.capitalize()])
