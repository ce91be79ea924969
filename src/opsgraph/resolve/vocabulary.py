"""Words a request uses that never name a record on their own: function words and the
verbs and nouns of the trade ("book", "cancel", "invoice"). A name search skips them, so
"the" does not find Theo and "more" does not find Moore; inside a longer name they still
count ("Pilates for Beginners")."""

from __future__ import annotations

FUNCTION_WORDS = frozenset("""
a about above after again against all also am an and any anyone anything are around as
ask at back be because been before being below between both but by can cancel cancelled
cancelling check could did do does doing done down during each either else every few for
from further get give go going got had has have having he her here hers herself him
himself his how i if in into is it its itself just know let lets like make may me might
mine more most much must my myself need needs no nor not now of off on once one only or
other our ours out over own please put same see she should so some such than thanks thank
that the their theirs them themselves then there these they this those through to too
under until up us very via want wants was we were what whats when where which while who
whom whose why will with would yes yet you your yours yourself mr mrs ms miss dr
""".split())
"""Words that carry no name: skipped alone, and not counted as words of a record's name
("Pilates for Beginners" is two words long)."""

TRADE_WORDS = frozenset("""
add added apply approve arrange assign available availability balance bill billed book
booked booking bookings busy call calendar change changed charge charged class classes
confirm contact copy court courts create credit date day days due email emailed emails
event events fee find free full hour hours hire info invoice invoices issue issued late
list look member members membership message minute minutes move name new note number
open paid pay payment phone place places price pull refund refunded register registered
registration remind reminder reschedule reserve room rota schedule send sent session
sessions shift shifts show slot slots spot staff status swap switch tell text time times
update waitlist week weekend junior family premium standard peak
actually again already always anybody anyone asap attend attending away bad best better
big bring broken came cheers come comes coming could cover covered covering currently
details does done early else enough ever everyone everything fine first fix fixed
following full give good great guest guests happen happening help hey hi hello how's
just keep kind last latest leave left less let's long lot lots many maybe mean means
missed month months morning much near never next nice nobody nothing okay ok old ones
people person play played playing plus probably quick quickly quite really right said
say says second sent since soon sorry sort start started starts still stop sure take
taken teach teaching thing things think today told took tomorrow tonight total try
trying turn two usual usually wait waiting went what's where's who's why's work working
works yesterday
""".split())
"""The trade's words: part of some names ("Court 1", "Members' Social Night"), never a
name alone."""

STOPWORDS = FUNCTION_WORDS | TRADE_WORDS
"""Words skipped by the name search when they stand alone."""

GENERIC = frozenset({"court", "courts", "studio", "studios", "room", "rooms", "class",
                     "session", "event", "night", "evening", "morning"})
"""Words that name a kind of thing, not one thing: alone they are a mention only when
they pick out one record."""

NUMBER_SIGNS = frozenset({"no", "no.", "number", "num", "nr"})
"""Words a number follows as the number of something ("court no 2")."""

STAFF_CUES = frozenset({"shift", "shifts", "rota", "staff", "coach", "instructor",
                        "receptionist", "cover", "covering", "assign", "schedule", "swap",
                        "working", "duty", "teacher", "manager", "groundsman", "colleague"})
"""Words that make a name shared by a member and a staff member mean the staff member."""

SYNONYMS = {"night": ("evening",), "evening": ("night",), "nite": ("night", "evening"),
            "champs": ("championship",), "champ": ("championship",), "social": ("social",),
            "kickoff": ("kick-off",), "beginner": ("beginners",), "beginners": ("beginner",)}
"""Loose words for words of names ("the social night" for Members' Social Night... and
the Wine & Tennis Evening)."""
