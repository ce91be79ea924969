"""The figures a text states — prices, times, durations, counts — each in one spelling, so
that an answer's figures can be compared with those of what was read.

"£10.00", "10 pounds" and "£10"; "7pm", "7:00 pm" and "19:00"; "two hours", "2 hrs" and
"2-hour"; "1,200" and "1200"; "£8.50" and "£8.5" agree, and a catalogue field such as
"monthly_price: 30.0" states the price £30. Numbers are matched whole ("£8" is not in
"£80", "2 hours" not in "12 hours"). Used by the knowledge answer's check (an answer may state no
figure that its passages do not) and by the knowledge eval's scorer.
"""

from __future__ import annotations

import re

_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
          "fifteen": 15, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60}
_UNITS = {"hour": ("hours", "hour", "hrs", "hr", "h"),
          "minute": ("minutes", "minute", "mins", "min"),
          "day": ("days", "day"), "week": ("weeks", "week"), "month": ("months", "month"),
          "year": ("years", "year"), "m": ("metres", "metre", "meters", "meter", "m"),
          "working day": ("working days", "working day", "business days", "business day")}
_UNIT_RE = re.compile(
    r"(\d)\s*-?\s*(" + "|".join(sorted((re.escape(a) for aliases in _UNITS.values()
                                         for a in aliases), key=len, reverse=True))
    + r")\b")
_UNIT_OF = {a: unit for unit, aliases in _UNITS.items() for a in aliases}
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_WORDS) + r")\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_CLOCK = re.compile(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s*m\b\.?")
_HHMM = re.compile(r"(?<![\d.:£])(\d{1,2})[:.](\d{2})(?![\d])")
_POUNDS = re.compile(r"(\d+(?:\.\d+)?)\s*(?:pounds?|gbp)\b")
_PENCE = re.compile(r"(\d+)\s*(?:pence|p)\b")
_ZERO_PENCE = re.compile(r"£(\d+)\.0+\b")
_TRAILING_ZEROS = re.compile(r"£(\d+\.\d*?[1-9])0+\b")
_PRICE_FIELD = re.compile(r"\b(\w*(?:price|fee|cost|amount)\w*\"?\s*:\s*)(\d+(?:\.\d+)?)\b")
_PERCENT = re.compile(r"(\d+)\s*(?:percent|per cent)\b")
_LIST_MARK = re.compile(r"^\s*\d+[.)]\s+", re.MULTILINE)
_QUANTITY = re.compile(r"£\d+(?:\.\d+)?|\d{2}:\d{2}|\d+(?:\.\d+)?")
_IDENTIFIER = re.compile(r"(?<![\w-])(?=[\w-]*[a-z_])(?=[\w-]*\d)(?!\d+p(?![\w-]))[\w-]+")


def _clock(match: re.Match[str]) -> str:
    hour, minute, half = int(match.group(1)), match.group(2) or "00", match.group(3)
    if half == "p" and hour < 12:
        hour += 12
    if half == "a" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute}"


def normalise(text: str) -> str:
    """Lower case, single spaces, and numbers, prices, times and units in one spelling."""
    out = text.lower().replace("\u00a0", " ").replace("–", "-").replace("—", "-")
    out = _NUMBER_WORD.sub(lambda m: str(_WORDS[m.group(1)]), out)
    out = _THOUSANDS.sub("", out)
    out = _PRICE_FIELD.sub(r"\1£\2", out)
    out = _CLOCK.sub(_clock, out)
    out = _HHMM.sub(lambda m: f"{int(m.group(1)):02d}:{m.group(2)}", out)
    out = _POUNDS.sub(r"£\1", out)
    out = _ZERO_PENCE.sub(r"£\1", out)
    out = _TRAILING_ZEROS.sub(r"£\1", out)
    out = _PENCE.sub(r"\1p", out)
    out = _PERCENT.sub(r"\1%", out)
    out = _UNIT_RE.sub(lambda m: f"{m.group(1)} {_UNIT_OF[m.group(2)]}", out)
    return re.sub(r"\s+", " ", out).strip()


def contains(text: str, phrase: str) -> bool:
    """Whether the normalised text holds the normalised phrase as a whole (a number is not
    part of a longer number, a word not part of a longer word)."""
    wanted = normalise(phrase)
    if not wanted:
        return False
    pattern = (r"(?<![\w.£])" if wanted[0].isalnum() else "") + re.escape(wanted) + (
        r"(?![\w]|[.,:]\d)" if wanted[-1].isalnum() else "")
    return re.search(pattern, normalise(text)) is not None


def quantities(text: str) -> set[str]:
    """The numbers a text states, normalised ("£12", "19:00", "2.5", "14"); left out: list
    markers, identifiers that mix letters and digits (a card id, an SKU, a section id), and
    0 and 1 as plain numbers (ordinary words: "one of", "a 1-hour slot")."""
    text = _IDENTIFIER.sub(" ", normalise(_LIST_MARK.sub(" ", text)))
    found = set()
    for token in _QUANTITY.findall(text):
        if token[0].isdigit() and ":" not in token and "." not in token:
            token = str(int(token))  # "01" and "1" are one number
        if token not in ("0", "1"):
            found.add(token)
    return found


def ungrounded(answer: str, *read: str) -> list[str]:
    """The figures `answer` states that none of `read` states, sorted (a price must be read
    as a price; any other number as a number of that value, priced or not)."""
    grounded = set().union(*(quantities(t) for t in read))
    values = {t.lstrip("£") for t in grounded}
    return sorted(t for t in quantities(answer)
                  if (t not in grounded if t.startswith("£") else t.lstrip("£") not in values))
