"""E-mail addresses and phone numbers in a request.

Phone numbers go through `phonenumbers` (libphonenumber): a national number ("07700
900123") is read in the venue's country, and every number comes back as E.164. Its
matcher runs at leniency POSSIBLE, because the numbers set aside for drama and examples
(+44 7700 900xxx, which the demo club uses) are possible but not "valid"; what that
lets through is sorted here: a run of fewer than 9 digits, or a date ("2026-12-03"),
is not a phone.
"""

from __future__ import annotations

import re

import phonenumbers

from opsgraph.resolve.mentions import Mention
from opsgraph.resolve.tokens import Claimed

_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}(?![\w-])",
                    re.IGNORECASE)
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[/.]\d{1,2}[/.]\d{2,4}")
_MIN_DIGITS = 9
_CURRENCY_COUNTRY = {"GBP": "GB", "EUR": "IE", "USD": "US", "AUD": "AU", "CAD": "CA",
                     "NZD": "NZ", "CHF": "CH", "SEK": "SE", "NOK": "NO", "DKK": "DK"}
"""A venue's country when its settings name none: the usual one of its currency."""


def venue_country(tenant: dict[str, object]) -> str | None:
    """The ISO country code national phone numbers are read in: the tenant's `country`,
    else the usual country of its currency, else None (international numbers only)."""
    country = tenant.get("country")
    if isinstance(country, str) and len(country.strip()) == 2:
        return country.strip().upper()
    currency = str(tenant.get("currency") or "").upper()
    return _CURRENCY_COUNTRY.get(currency)


def find_emails(text: str, claimed: Claimed) -> list[Mention]:
    """Every e-mail address, lower-cased (the form members' addresses are stored in)."""
    found = []
    for m in _EMAIL.finditer(text):
        address = m.group().rstrip(".")
        claimed.add(m.start(), m.start() + len(address))
        found.append(Mention(address, "email", address.lower(), start=m.start()))
    return found


def find_phones(text: str, claimed: Claimed, country: str | None) -> list[Mention]:
    """Every valid phone number, as E.164."""
    found = []
    for match in phonenumbers.PhoneNumberMatcher(text, country,
                                                 leniency=phonenumbers.Leniency.POSSIBLE):
        raw = match.raw_string
        if (claimed.overlaps(match.start, match.end) or _DATE.search(raw)
                or sum(ch.isdigit() for ch in raw) < _MIN_DIGITS):
            continue
        e164 = phonenumbers.format_number(match.number, phonenumbers.PhoneNumberFormat.E164)
        claimed.add(match.start, match.end)
        found.append(Mention(match.raw_string, "phone", e164, start=match.start))
    return found
