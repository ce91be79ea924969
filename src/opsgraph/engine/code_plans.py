"""Plans code makes without a planner call, when the ranker and the resolver leave no doubt.

Most of what staff type is one of these shapes, and a small model plans them worse than
code (held-out: five of six write requests that missed their card were plans naming the
wrong capability; a lookup of the attendance report was planned as the events calendar):

- **a question the knowledge agents answer** (`knowledge_question`): the ranker's best agent
  for it, and for each of its clauses, is a knowledge agent, and it names no change (or
  only as what it asks about: "how late can I cancel?") and asks for no head count ("how
  many have signed up for the workshop" is read from the registrations);
- **a question naming nothing** (`question_naming_nothing`): asked as a question, with no
  record or day in it the resolver finds, its best knowledge agent ranked close to the first;
- **a question about a rule** (`rule_question`): one question about a rule, a price or a
  time limit ("how late can I cancel my yoga class tomorrow?", "how much is a padel court
  at the weekend?") naming no person's record — a court, a class, an event or a day are
  what the rule is about, so they may be named; "how much does jane owe?" is a record's;
- **a follow-up to a knowledge question** (`knowledge_follow_up`): "and how long until I
  get a proper reply?" after "how do I make a complaint?", naming no change or record;
- **a single lookup** (`single_read`): the ranker's best agent is a query agent scoring
  `READ_SCORE` or more, ahead of the next by `READ_MARGIN`, and the best for each clause
  too; the request names no change, is not a short follow-up on a thread, and the caller
  may use the agent ("which classes are the most popular atm" ranks the attendance report
  0.51 ahead);
- **a single change** (`single_write`): the ranker's best agent is an action agent with one
  write verb, ahead of the next by `WRITE_MARGIN` (or, among agents closer than that, the
  only one whose required records and details the request all names); the request says in
  its own words that something should change, is not a question, and its verb agrees with
  the agent's ("book" is not a cancel); every other clause of it is said for context ("he's
  moving to Leeds") or lists people ("charlie johnson and kai robinson"), not a second ask;
  and every required slot code can see (a time, an amount, an e-mail address, a phone
  number) is in the request or the recent turns.

Anything else, and anything in doubt, goes to the planner. On the suite's cases the
single-write rule plans 56 requests (35 dev, 21 held-out), each with the expected
capability, and no other case; the single-read rule 26 (19 dev, 7 held-out), each with the
expected capability, and no question of the knowledge set. The words these rules read are
`request_words`'.
"""

from __future__ import annotations

import re
from itertools import pairwise

from opsgraph.engine.context import RunContext
from opsgraph.engine.memory import Turn
from opsgraph.engine.plan import PlannedTask, TaskPlan
from opsgraph.engine.request_words import (
    SELF_WORDS,
    asks_about_a_rule,
    asks_for_a_head_count,
    asks_for_information,
    leans_on_earlier_turn,
    names_a_write,
    names_its_change,
    reads_a_record,
    reads_as_question,
    split_clauses,
    verb_agrees,
)
from opsgraph.gates import decide
from opsgraph.knowledge.embeddings import get_embedder
from opsgraph.principal import WRITE_VERBS
from opsgraph.registry.loader import get_registry
from opsgraph.registry.ranker import rank_agents
from opsgraph.registry.spec import AgentSpec
from opsgraph.resolve.mentions import Resolution
from opsgraph.resolve.slots import candidates_for

KNOWLEDGE_SCORE = 0.3
"""The ranker's score a knowledge agent needs to take a question without the planner (on the
demo registry, questions score 0.38 to 0.93; a stray word ranked first scores about 0.3)."""
KNOWLEDGE_NOTE = "a question for the knowledge agents: planned by code, no planner call"
QUESTION_NOTE = ("a question for information planned as changes: the changes dropped, the "
                 "question asked of the knowledge agents")
KNOWLEDGE_GAP = 0.35
"""How far below the ranker's first agent a knowledge agent may rank for a question that
names nothing to still take it (knowledge set: the questions the planner got scored up to
0.34 below; the suite's record questions naming nothing, "who owes us money?", 0.44 and
more)."""
OFF_TOPIC_SCORE = 0.25
"""Below this the best knowledge agent's score says the question is not about the club at
all ("what do you think of the weather?" scores 0.22): the planner answers it (its empty plan
gives the tenant's off-topic reply)."""
QUESTION_NAMING_NOTHING_NOTE = ("a question naming no record or day: asked of the knowledge "
                                "agents, no planner call")
RULE_NOTE = ("a question about a rule, a price or a time limit: asked of the knowledge "
             "agents, no planner call")
FOLLOW_UP_NOTE = ("a follow-up to a question for the knowledge agents: asked of them, no "
                  "planner call")
_RECORD_KINDS = frozenset({"member", "staff", "booking", "invoice"})
"""What a person's records are: a rule question naming one asks about that record."""
_NAMED_KINDS = frozenset({"member", "staff", "booking", "event", "resource", "invoice",
                          "datetime", "date"})
WRITE_MARGIN = 0.02
"""How far the ranker's best action agent must score ahead of the next agent for code to
plan a single change (on the suite, the wrong first agents of change requests led by
0.001 to 0.004; the right ones by up to 0.3)."""
WRITE_NOTE = "a single change: planned by code, no planner call"
READ_MARGIN = 0.08
"""How far the ranker's best query agent must score ahead of the next for code to plan a
single lookup (on the suite's dev cases with one expected task, every first query agent this
far ahead was the expected one; the wrong ones led by 0.067 and less), with room for the int8
embedder's own noise: on the suite's requests its margins differ from the float model's by
0.01 (median) and up to 0.03; a wrong first agent that led by 0.070 leads by 0.077 with it
("r u open on boxing day", held-out knowledge-06)."""
READ_SCORE = 0.5
"""The score the best query agent needs as well: below it the match is loose, and the
question may be one for the knowledge base ("how long is the swimming pool?" ranks the
facilities status first at 0.47, "how long is a gift voucher valid for" the membership
status at 0.38)."""
READ_NOTE = "a single lookup: planned by code, no planner call"
FOLLOW_UP_WORDS = 6
"""A request this short, on a thread with an earlier question, is read as its follow-up."""

_SEEN_KINDS = frozenset({"datetime", "date", "datetime_range", "money", "email", "phone"})
"""Slot kinds the resolver finds whenever they are written: a required one it does not find
is a sign the agent is not the one meant ("move Aisha onto premium" is no booking move)."""
_FIT_KINDS = _SEEN_KINDS | {"member", "staff", "resource", "event", "invoice"}
"""Slot kinds a request names for code to tell close agents apart by what they need."""
CLOSE = 0.05
"""How close below the ranker's first an action agent may score to be told apart from it by
what the request names (`_the_writer`)."""


def clauses_of(request: str) -> list[str]:
    """The asks of a several-ask request (two words or more each; none for a single ask),
    embedded with the request in one call for the ranker that reads them next."""
    clauses = _asks(request)
    if clauses:
        get_embedder().embed_queries([request, *clauses])
    return clauses


def _asks(request: str) -> list[str]:
    clauses = [c for c in split_clauses(request) if len(c.split()) >= 2]
    return clauses if len(clauses) >= 2 else []


def prefetch_ranking(request: str) -> None:
    """Start embedding, in the background, what the planning step ranks first (the request
    and its asks), so that the run's thread reads and the embedding overlap."""
    get_embedder().prefetch([request, *_asks(request)])


def follow_up(request: str, history: list[Turn]) -> str:
    """`request` with the subject of the thread's previous question when it is a follow-up —
    short ("and off-peak?" after "how much is premium membership?") or leaning on it with a
    word such as "it", "that" or "what about" — else as it is."""
    earlier = [t["content"] for t in history[:-1] if t["role"] == "user"]
    if not earlier or (len(request.split()) > FOLLOW_UP_WORDS
                       and not leans_on_earlier_turn(request)):
        return request
    return f"{request} (a follow-up to: {earlier[-1].strip()})"


def knowledge_question(request: str, history: list[Turn] | None = None) -> TaskPlan | None:
    """The one-task plan of a question the knowledge agents answer — the ranker's best agent
    for it (and for each of its clauses) is a knowledge agent, asked alone or as the
    follow-up it is, and it names no change — else None (the planner decides). Seed 000's
    built-in harness: one agent pass, one model call when the pre-read answers it."""
    if ((names_a_write(request) and not asks_for_information(request))
            or not (len(request.split()) >= 2 or request.rstrip().endswith("?"))):
        return None  # a change, or one bare word ("launch"): the planner reads it
    if asks_for_a_head_count(request):
        return None  # "how many have signed up for the workshop": the records say
    asked = follow_up(request, history or [])
    if not any(_knowledge_ranks_first(text) for text in dict.fromkeys([request, asked])):
        return None
    return knowledge_plan(asked, KNOWLEDGE_NOTE)


def _knowledge_ranks_first(text: str) -> bool:
    """The ranker's best agent for `text`, and for each of its clauses, is a knowledge agent
    scoring at least `KNOWLEDGE_SCORE`."""
    best = rank_agents(text, top_k=1)
    best += [r for clause in clauses_of(text) for r in rank_agents(clause, top_k=1)]
    return bool(best) and all(r.domain == "knowledge" and r.score >= KNOWLEDGE_SCORE
                              for r in best)


def resolution_of(ctx: RunContext, text: str, history: list[Turn]) -> Resolution:
    """What the resolver reads in `text` with the recent turns (`engine.slot_filling`: read
    once per run)."""
    # Only the rules that look for records or days in a request read it with the resolver:
    # a lookup or a knowledge question planned by code does not import it.
    # heavy: opsgraph.resolve.resolver (cold start)
    from opsgraph.engine import slot_filling

    return slot_filling.resolution_of(ctx, text, history)


def question_naming_nothing(ctx: RunContext, request: str,
                            history: list[Turn]) -> TaskPlan | None:
    """The knowledge task of a question that names no record and no day (the resolver finds
    no member, staff, booking, event, resource, invoice, date or time in it, nor the caller's
    own record: "is my membership still on hold?" asks about a record) and whose best
    knowledge agent ranks within `KNOWLEDGE_GAP` of the ranker's first: "how far ahead can a
    premium member book a court?" ranks the booking agents first, but asks about a rule,
    not a booking. Else None."""
    if not (reads_as_question(request) or asks_for_information(request)):
        return None
    if any(m.kind in _NAMED_KINDS for m in resolution_of(ctx, request, history).mentions):
        return None
    asked = follow_up(request, history)
    ranked = rank_agents(asked, top_k=len(get_registry().agents))
    knowledge = next((r for r in ranked if r.domain == "knowledge"), None)
    if (knowledge is None or knowledge.score < OFF_TOPIC_SCORE
            or ranked[0].score - knowledge.score >= KNOWLEDGE_GAP):
        return None  # off topic ("what do you think of the weather?"), or about records
    return knowledge_plan(asked, QUESTION_NAMING_NOTHING_NOTE)


def rule_question(ctx: RunContext, request: str, history: list[Turn]) -> TaskPlan | None:
    """The knowledge task of one question about a rule, a price or a time limit
    (`request_words.asks_about_a_rule`) that names no member, staff, booking or invoice
    other than the asker's own ("how late can I cancel my booking" asks the rule; "how much
    does jane smith owe?" her invoices). Else None."""
    if not asks_about_a_rule(request):
        return None
    if any(m.kind in _RECORD_KINDS and m.start >= 0 and m.text.casefold() not in SELF_WORDS
           for m in resolution_of(ctx, request, history).mentions):
        return None
    return knowledge_plan(follow_up(request, history), RULE_NOTE)


def knowledge_follow_up(ctx: RunContext, request: str,
                        history: list[Turn]) -> TaskPlan | None:
    """The knowledge task of a question that follows up a question the knowledge agents
    take ("and how long until I get a proper reply?" after "how do I make a complaint?"),
    naming no change and no record of its own; else None."""
    asked = follow_up(request, history)
    if asked == request or not (reads_as_question(request) or asks_for_information(request)):
        return None  # not a follow-up, or not a question
    if names_a_write(request) or any(
            m.kind in _RECORD_KINDS and m.start >= 0 and m.text.casefold() not in SELF_WORDS
            for m in resolution_of(ctx, request, history).mentions):
        return None
    at = max(i for i, t in enumerate(history[:-1]) if t["role"] == "user")
    earlier = history[at]["content"]
    before = history[:at + 1]
    if not (knowledge_question(earlier, before) or asks_about_a_rule(earlier)
            or question_naming_nothing(ctx, earlier, before)):
        return None
    return knowledge_plan(asked, FOLLOW_UP_NOTE)


def knowledge_plan(request: str, note: str) -> TaskPlan:
    """One knowledge search for `request`, as it was asked."""
    return TaskPlan(tasks=[PlannedTask(id="t1", domain="knowledge", operation="search",
                                       instruction=request.strip())], notes=[note])


def single_write(ctx: RunContext, request: str, history: list[Turn]) -> TaskPlan | None:
    """The one-task plan of a single change (see the module docstring), else None."""
    if (not names_its_change(request) or asks_for_information(request)
            or reads_as_question(request)
            or (len(history) > 1 and len(request.split()) <= FOLLOW_UP_WORDS)):
        return None  # a question, or a short reply the conversation gives its meaning
    spec = _the_writer(ctx, request, history)
    if spec is None:
        return None
    verbs = [v for v in spec.operations if v in WRITE_VERBS]
    for clause in clauses_of(people_joined(ctx, request, history)):
        best = rank_agents(clause, top_k=1)[0]
        if best.agent != spec.name and (
                reads_as_question(clause) or reads_a_record(clause)
                or (get_registry().get(best.agent).kind == "action"
                    and names_its_change(clause))):
            return None  # a second ask
    if not _fits(ctx, spec, request, history, _SEEN_KINDS):
        return None
    return TaskPlan(tasks=[PlannedTask(id="t1", domain=spec.domain, operation=verbs[0],
                                       instruction=request.strip())], notes=[WRITE_NOTE])


_PEOPLE_GAP = re.compile(r"\s*(?:,\s*and|,|and|&)\s*", re.IGNORECASE)


def people_joined(ctx: RunContext, request: str, history: list[Turn]) -> str:
    """`request` with the "and" between two people it names written "&", so that a list of
    people is one ask, not two ("add charlie johnson and kai robinson to the finals")."""
    people = sorted((m for m in resolution_of(ctx, request, history).mentions
                     if m.kind in ("member", "staff") and m.start >= 0),
                    key=lambda m: m.start)
    out = request
    for first, second in reversed(list(pairwise(people))):
        if first.stop <= second.start and _PEOPLE_GAP.fullmatch(
                request[first.stop:second.start]):
            out = out[:first.stop] + " & " + out[second.start:]
    return out


def _the_writer(ctx: RunContext, request: str, history: list[Turn]) -> AgentSpec | None:
    """The action agent a single change is for: the ranker's first, ahead of the next by
    `WRITE_MARGIN`, with one write verb the request's verb agrees with. When the first few
    are closer than that (within `CLOSE`), the one whose required records and details the
    request all names, if only one does ("add charlie johnson and kai robinson to the
    championship finals": the event registration 0.416, an invoice 0.406, which needs its
    lines). Never when the first is a query agent: a request that reads like a question
    first is not a single change ("reply to ahmed's email about our weekend opening hours"
    ranks the knowledge base first, a scheduled send close behind)."""
    ranked = rank_agents(request, top_k=3)
    if len(ranked) < 2:
        return None
    first = get_registry().get(ranked[0].agent)
    if first.kind != "action":
        return None  # its best match is a question's agent
    if ranked[0].score - ranked[1].score >= WRITE_MARGIN:
        return first if _writes_as_asked(first, request) else None
    close = [get_registry().get(r.agent) for r in ranked
             if ranked[0].score - r.score < CLOSE]
    fitting = [spec for spec in close if _writes_as_asked(spec, request)
               and _fits(ctx, spec, request, history, _FIT_KINDS, every_text=True)]
    return fitting[0] if len(fitting) == 1 else None


def _writes_as_asked(spec: AgentSpec, request: str) -> bool:
    """An action agent with one write verb, which the request's verb agrees with."""
    verbs = [v for v in spec.operations if v in WRITE_VERBS]
    return (spec.kind == "action" and len(spec.operations) == 1 and bool(verbs)
            and verb_agrees(verbs[0], request))


def _fits(ctx: RunContext, spec: AgentSpec, text: str, history: list[Turn],
          kinds: frozenset[str], every_text: bool = False) -> bool:
    """Every required slot of `spec` of these kinds is something `text` names (with the
    recent turns); `every_text`: and the agent has no required free-text slot, which
    code cannot see."""
    needed = [s for s in spec.slots if s.required and s.kind in kinds]
    if every_text and any(s.required and s.kind == "text" for s in spec.slots):
        return False
    if not needed:
        return True
    resolution = resolution_of(ctx, text, history)
    return all(candidates_for(s.kind, resolution) for s in needed)


def single_read(ctx: RunContext, request: str, history: list[Turn]) -> TaskPlan | None:
    """The one-task plan of a single lookup (see the module docstring), else None. The
    caller's role decides nothing here when a visitor or role gate would refuse them: the
    planner may find an agent they can use; a plan without the feature is planned, and
    refused by its gate as the planner's plan would be."""
    if names_a_write(request) and not asks_for_information(request):
        return None  # a change in it, or a lookup before one
    if len(history) > 1 and (len(request.split()) <= FOLLOW_UP_WORDS
                             or leans_on_earlier_turn(request)):
        return None  # a reply the conversation gives its meaning ("and her other one?")
    ranked = rank_agents(request, top_k=2)
    if (len(ranked) < 2 or ranked[0].score < READ_SCORE
            or ranked[0].score - ranked[1].score < READ_MARGIN):
        return None
    spec = get_registry().get(ranked[0].agent)
    if spec.kind != "query":
        return None
    verb = spec.operations[0]  # of the agents serving it, the task's agent is the ranker's
    # best for its instruction (`decompose.choose_agent`): this one
    decision = decide(ctx.principal, spec, verb, plan=ctx.plan)
    if not decision and decision.gate in ("visitor", "role", "read_only"):
        return None
    if any(rank_agents(clause, top_k=1)[0].agent != spec.name
           for clause in clauses_of(request)):
        return None  # a second ask
    return TaskPlan(tasks=[PlannedTask(id="t1", domain=spec.domain, operation=verb,
                                       instruction=request.strip())], notes=[READ_NOTE])
