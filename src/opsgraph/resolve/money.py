"""Amounts of money in the venue's currency: "£15", "15.50 GBP", "15 quid", "fifteen
pounds", "£1,200", "50p".

An amount counts when it carries a sign of money: the currency's symbol or code before or
after it, a unit word ("pounds", "quid", "euros", "pence"), or a verb of money right
before it ("refund 22.50", "charge her 15"). Any other bare number is not an amount (it
is a time, a court, a count). Only the tenant's own currency is read, so "$20"
at a club that bills in pounds is left alone rather than taken as twenty pounds. "In
full" is the amount left to refund on the invoice the request names.
"""

from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache

from opsgraph.operations.base import Context
from opsgraph.operations.currency import SYMBOLS
from opsgraph.operations.invoices import refundable
from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.tokens import NUMBER_WORDS, Claimed, number_value

_CURRENCIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # code: (unit words, hundredth words); the symbol is the one summaries write
    "GBP": (("pounds", "pound", "quid", "gbp"), ("pence", "p")),
    "EUR": (("euros", "euro", "eur"), ("cents", "cent", "c")),
    "USD": (("dollars", "dollar", "bucks", "usd"), ("cents", "cent", "c")),
}
_NUMBER = r"\d{1,3}(?:,\d{3})+(?:\.\d{1,2})?|\d+(?:\.\d{1,2})?"
_WORDS = "|".join(sorted(NUMBER_WORDS | {"a", "and"}, key=len, reverse=True))
_SPELT = rf"(?:(?:{_WORDS})(?:[\s-]+(?:{_WORDS}))*)"


@lru_cache(maxsize=len(_CURRENCIES))
def _patterns(currency: str) -> list[tuple[re.Pattern[str], Decimal, str]]:
    """(pattern with a group `n` or `w`, the factor to the unit, the group that is the
    mention's words, "" for all of it) for one currency: compiled once."""
    units, hundredths = _CURRENCIES[currency]
    symbol = SYMBOLS[currency]
    unit = "|".join(units)
    small = "|".join(hundredths)
    sym, code = re.escape(symbol), currency.lower()
    one = Decimal(1)
    return [
        (re.compile(rf"(?:{sym}\s?|\b{code}\s?)(?P<n>{_NUMBER})", re.I), one, ""),
        (re.compile(rf"\b(?P<n>{_NUMBER})\s?(?:{unit})\b", re.I), one, ""),
        (re.compile(rf"\b(?P<n>\d{{1,2}})\s?(?:{small})\b", re.I), Decimal("0.01"), ""),
        (re.compile(rf"\b(?P<w>{_SPELT})\s+(?:{unit})\b", re.I), one, ""),
        (re.compile(rf"\b(?:refund|refunding|charge|charging|credit|crediting)\s+"
                    rf"(?:(?:her|him|them|me|us)\s+)?(?P<n>{_NUMBER})\b(?![.:]\d)", re.I),
         one, "n"),
    ]


def find_amounts(text: str, claimed: Claimed, currency: str) -> list[Mention]:
    """Every amount in `currency` (the tenant's), as a decimal string with two places."""
    if currency.upper() not in _CURRENCIES:
        return []
    found: list[Mention] = []
    for pattern, factor, group in _patterns(currency.upper()):
        for m in pattern.finditer(text):
            start, end = m.span(group) if group else m.span()
            if claimed.overlaps(start, end):
                continue
            amount = _amount(m, factor)
            if amount is None:
                continue
            claimed.add(start, end)
            found.append(Mention(text[start:end], "money", f"{amount:.2f}", start=start))
    return sorted(found, key=lambda mention: mention.start)


def _amount(m: re.Match[str], factor: Decimal) -> Decimal | None:
    if m.groupdict().get("w"):
        words = [w for w in re.split(r"[\s-]+", m.group("w").lower()) if w]
        spelt = number_value(words)
        return None if spelt is None else Decimal(spelt) * factor
    return Decimal(m.group("n").replace(",", "")) * factor


_IN_FULL = re.compile(r"\b(?:in\s+full|full\s+refund|the\s+full\s+amount|(?:the\s+)?whole\s+"
                      r"(?:amount|thing)|fully\s+refund|refund\s+(?:it\s+)?all)\b", re.I)


def find_full_amounts(ctx: Context, text: str, claimed: Claimed,
                      found: list[Mention]) -> list[Mention]:
    """"In full" ("refund INV-1129 in full", "a full refund") as the amount it means: what
    was paid on the one invoice the request names and is not refunded yet ("0.00" when
    nothing was, the label saying so). Nothing when no single invoice is named."""
    invoices = [m for m in found if m.kind == "invoice" and m.value]
    said = [m for m in _IN_FULL.finditer(text) if not claimed.overlaps(m.start(), m.end())]
    if len(invoices) != 1 or not said:
        return []
    doc = ctx.scope["invoices"].find_one({"_id": invoices[0].value},
                                         projection={"paid": 1, "refunded": 1, "number": 1})
    if doc is None:
        return []
    left = refundable(doc)
    what = (f"all that was paid on {doc['number']} and not yet refunded" if left > 0
            else f"nothing: {doc['number']} has no payment left to refund")
    for m in said:
        claimed.add(m.start(), m.end())
    return [Mention(m.group(), "money", f"{left:.2f}", what, start=m.start()) for m in said]
