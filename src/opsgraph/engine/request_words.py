"""How a request reads: the word lists with which code tells a question from a change, and
the predicates over them, for the plan review (`plan_review`) and the plans code makes
(`code_plans`). Words only: what the request names is the resolver's (`opsgraph.resolve`),
what it is about the ranker's."""

from __future__ import annotations

import re

# Verbs that name a change outright: a request holding one is never a plain question (the
# knowledge agents' fast path, `code_plans.knowledge_question`, leaves it to the planner).
_WRITE_VERBS = (
    r"book|rebook|reserve|cancel|scrap|delete|remove|change|update|edit|move|swap|"
    r"reschedule|refund|send|e-?mail|notify|remind|register|enrol|enroll|sign\s+(?:\w+\s+)?"
    r"up|add|assign|issue|invoice|charge|create|schedule|freeze|pause|suspend|terminate|"
    r"renew|upgrade|downgrade|promote|announce|approve|waitlist")
_WRITE_WORD = rf"(?:{_WRITE_VERBS})(?!\w*(?:s|ion|er|ment|al)\b)\w*"
"""One of those verbs in a verb's form ("book", "booked", "cancelling"), not a noun made from
it: "her bookings", "my invoices", "any new emails?", "the cancellation policy", "a
reminder", "her address" name no change (a read of payments and bookings kept the refund
the planner made of it)."""
_WRITE = re.compile(rf"\b{_WRITE_WORD}", re.IGNORECASE)
# Words with which people ask for a change (any tense, any politeness): those verbs and the
# looser words around them. A question with none of them ("is court 1 free?", "where do I
# park?") asks for nothing to be changed.
_OWN_CHANGE_WORDS = (
    _WRITE_WORD + r"|drop|chang|correct|fix|set|reimburse|credit|text|message|tell|"
    r"let\s+(?:\w+\s+){1,3}know|count\s+\w+\s+in|sign|put|give|cover|bill|make|arrange|end|"
    r"report|log|raise|close|open|new|moved|married|switch|replace|mark|"
    # a fault described is a fault to report ("the lights in studio b keep flickering")
    r"broke|leak|flicker|crack|loose|jammed|faulty|damaged|not\s+working|out\s+of\s+order")
# asking for what was just discussed: "please see to it", "go ahead", "sort it out"
_DEFERENCE = (r"see\s+to|go\s+ahead|do\s+(?:it|that|this)\b|sort\s+(?:it|that|this|out)|"
              r"deal\s+with|take\s+care|handle\s+(?:it|that|this)\b|proceed")
_CHANGE = re.compile(rf"\b(?:{_OWN_CHANGE_WORDS}|{_DEFERENCE})\w*", re.IGNORECASE)
_OWN_CHANGE = re.compile(rf"\b(?:{_OWN_CHANGE_WORDS})\w*", re.IGNORECASE)
_DEFERS = re.compile(rf"\b(?:{_DEFERENCE})", re.IGNORECASE)
# How a question for information opens ("where can I park?", "is court 1 free?"); a polite
# request ("can I get court 3 at 6", "could you…") is not one.
_WH = (r"what|what's|whats|where|where's|wheres|when|when's|who|who's|whos|whom|whose|"
       r"which|why|how|how's")
_QUESTION = re.compile(rf"^\W*(?:{_WH}|is|are|was|were|do|does|did|has|have)\b",
                       re.IGNORECASE)
# A question for information and nothing else: one sentence, opening with a question word
# that asks what, when, where, who, which, why or how, ending with "?" ("what's the
# deadline to cancel my daughter's place?", "how do I cancel my booking?", a follow-up's
# "and how late can I cancel?"). "can you cancel it?" and "when you can, cancel it." are not
# it.
_INFORMATION = re.compile(rf"^\W*(?:(?:and|so|but|ok|okay)\W+)?(?:{_WH})\b[^.!?]*\?\W*$",
                          re.IGNORECASE)
# Where what the asker says of themselves ends and their question begins.
_LEAD_IN = re.compile(r"\s*(?:[,;:.!]|\s[-–—])\s*")
_CLAUSES = re.compile(r"\s*(?:[,;.?!]+|\band then\b|\bthen\b|\band\b|\balso\b|\bplus\b)\s*",
                      re.IGNORECASE)
# A request opening this way is polite, not a question ("can i get court 1 at 6?").
_POLITE = re.compile(r"^\W*(?:can|could|would|will|may)\b", re.IGNORECASE)
# A clause opening this way asks for something to be read ("look up her email").
_READ_OPENER = re.compile(r"^\W*(?:look|find|check|show|list|search|see|pull|tell\s+me|what|whats|"
                    r"how|when|where|who|which|is|are|do|does)\b", re.IGNORECASE)
# A head count asked for ("how many ppl have signed up for …", "who's coming to …", "any
# places left"): read from the records, whatever a document says of the same event.
_HEAD_COUNT = re.compile(
    r"\bhow\s+many\s+(?:people|ppl|persons|members|folk|players|kids|juniors|adults|guests|are|"
    r"have|has|of\s+them)\b[^?.!]*?\b(?:signed|booked|registered|coming|going|attending|"
    r"enrolled|on\s+the\s+(?:list|waitlist))\b"
    r"|\bwho(?:'s|s|\s+is|\s+has)?\s+(?:coming|going|attending|signed|booked|registered)\b"
    r"|\b(?:spaces?|places?|spots?|room)\s+left\b", re.IGNORECASE)
# Verbs whose agent must hear its own words: a request with none of them is not that change.
_VERB_WORDS = {
    "cancel": r"cancel|scrap|call\w*\s+off|drop|delete|remove|take\s+\w+\s+off|can'?t\s+make|"
              r"won'?t\s+make|end|terminat|quit|leav",
    "refund": r"refund|money\s+back|reimburs|credit|pay\s+\w+\s+back|overcharg|"
              r"charged\s+twice|duplicate",
}
_CANCELS = re.compile(r"\b(?:cancel|scrap|call\w*\s+off)", re.IGNORECASE)
# How a question about a rule, a price or a time limit opens ("how late can I cancel",
# "how much notice", "what's the joining fee", "until when can we cancel"), or about how a
# thing is done ("how do I make a complaint?"): the knowledge base answers it, whatever
# court, class, event or day it names. Asked without "?" too ("how long is a gift voucher
# valid for"): these openings are never an order.
_ASKED_RULE = (r"how\s+(?:late|long|soon|early|far|deep|big|wide|old|tall|many\s+times|"
               r"much\s+notice|much\s+(?:is|are|does|do|per|for|would|will|to|extra)\b)"
               r"|how\s+(?:do|can|should)\s+(?:i|we|you|members?|guests?|staff)\b"
               r"|until\s+when|by\s+when|what\s+does\b[^.!?]*\bcost")
_NAMED_RULE = (r"what(?:'s|s|\s+is|\s+are)?\s+the\s+(?:[\w-]+\s+){0,3}?(?:deadline|fees?|"
               r"prices?|cost|charge|supplement|minimum|maximum|limit|rules?|policy|notice|"
               r"penalty|deposit)\b")
_OPENING = r"^\W*(?:(?:and|so|but|ok|okay)\W+)?"
_RULE_QUESTION = re.compile(rf"{_OPENING}(?:{_ASKED_RULE}|{_NAMED_RULE})[^.!?]*[.?!]?\W*$",
                            re.IGNORECASE)
_NAMES_THE_RULE = re.compile(_OPENING + _NAMED_RULE, re.IGNORECASE)
# What happened is read from the records ("how long was court 1 booked", "how many times
# has she come"), not from a rule.
_PAST = re.compile(r"\b(?:was|were|did|has|had|have\s+been)\b", re.IGNORECASE)
# A modal after the opening asks what may or must be done ("how late can I cancel"), not
# what a record holds ("how long is my membership frozen for").
_MODAL = re.compile(r"\b(?:can|could|do|does|must|need|needs|have\s+to|has\s+to|should|"
                    r"will|would|may)\b", re.IGNORECASE)
# A change verb used as a noun after a determiner names no change ("off the waitlist",
# "my booking"): what the asker says of themselves before a question may hold one.
SELF_WORDS = frozenset({"me", "my", "myself", "mine", "i"})
"""The words with which the asker speaks of themselves."""
_SELF = re.compile(r"\b(?:me|my|myself|mine)\b|\bI\b", re.IGNORECASE)
_DETERMINED = re.compile(r"\b(?:the|a|an|my|your|our|his|her|their|this|that)\s+$",
                         re.IGNORECASE)
_LEANS = re.compile(r"^\W*(?:and|but|so|what about|how about|what if)\b|"
                    r"\b(?:it|its|that|this|these|those|they|them|their|one|ones|same)\b",
                    re.IGNORECASE)
"""Words that lean on an earlier turn: a longer request holding one is a follow-up too ("how
much is it for a non-member?" after a question about the junior clinic)."""


def names_a_write(request: str) -> bool:
    """True when the request holds a verb that names a change outright ("book", "refund")."""
    return bool(_WRITE.search(request))


def asks_for_change(request: str) -> bool:
    """True when the request holds a word people use to ask for a change."""
    return bool(_CHANGE.search(request))


def names_its_change(request: str) -> bool:
    """True when the request says in its own words what to change ("book court 2"), not
    only that what was just discussed should be done ("go ahead", "sort it out")."""
    return bool(_OWN_CHANGE.search(request)) and not _DEFERS.search(request)


def opens_as_question(request: str) -> bool:
    """True when the request opens as a question ("is court 1 free", "what time ...")."""
    return bool(_QUESTION.match(request))


def asks_for_information(request: str) -> bool:
    """True when the request is one question for information (`_INFORMATION`): a change
    word in it is what the question is about ("the deadline to cancel"), not an ask. The
    question may follow what the asker says of themselves, if that names no change: "I
    can't make my yoga class tomorrow, how late can I cancel without getting a strike?" (a
    question the local model planned as cancelling the whole class, knowledge set
    confusable-01, 2026-12-04)."""
    return _the_question(request, _INFORMATION) is not None


def _the_question(request: str, form: re.Pattern[str]) -> str | None:
    """The request's one question of `form`: the whole request, or what follows what the
    asker says of themselves when that names no change; else None."""
    text = request.strip()
    if form.match(text):
        return text
    for lead_in in _LEAD_IN.finditer(text):
        head, question = text[:lead_in.start()], text[lead_in.end():]
        if form.match(question):
            said_a_change = any(not _DETERMINED.search(head[:m.start()])
                                for m in _WRITE.finditer(head))
            if said_a_change or _DEFERS.search(head) or "?" in head:
                return None
            return question
    return None


def asks_about_a_rule(request: str) -> bool:
    """True when the request is one question about a rule, a price or a time limit
    (`_RULE_QUESTION`): "how late can I cancel my yoga class?", "how much is a padel court at the
    weekend?", "what's the deadline to cancel my daughter's place?". Not a head count, not
    what happened ("how long was court 1 booked"), and when it speaks of the asker's own
    ("my", "I") it names the rule ("what's the fee for my ...") or asks what may or must be
    done (a modal: "how late can I cancel my booking"), not what their record holds ("how
    long is my membership frozen for?")."""
    question = _the_question(request, _RULE_QUESTION)
    if question is None or asks_for_a_head_count(question) or _PAST.search(question):
        return False
    return (bool(_NAMES_THE_RULE.match(question)) or not _SELF.search(question)
            or bool(_MODAL.search(question)))


def reads_as_question(text: str) -> bool:
    """True when `text` is asked as a question (a polite request is not one)."""
    text = text.strip()
    return opens_as_question(text) or (text.endswith("?") and not _POLITE.match(text))


def verb_agrees(verb: str, request: str) -> bool:
    """True when `request` uses words of a change by `verb` (a cancel needs a cancel word;
    a cancel word rules out any other verb)."""
    words = _VERB_WORDS.get(verb)
    if words is not None and not re.search(rf"\b(?:{words})", request, re.IGNORECASE):
        return False
    return verb == "cancel" or not _CANCELS.search(request)


def reads_a_record(clause: str) -> bool:
    """True when a clause opens by asking for something to be read ("look up her email")."""
    return bool(_READ_OPENER.match(clause))


def asks_for_a_head_count(request: str) -> bool:
    """True when the request asks how many people a record holds (`_HEAD_COUNT`)."""
    return bool(_HEAD_COUNT.search(request))


def leans_on_earlier_turn(request: str) -> bool:
    """True when the request holds a word that leans on an earlier turn (`_LEANS`)."""
    return bool(_LEANS.search(request))


def split_clauses(request: str) -> list[str]:
    """The request cut at punctuation and joining words ("and", "then", "also", "plus")."""
    return _CLAUSES.split(request)
