"""Money as people read it: the tenant's currency with the amount (`£30.00`).

The tenant's `currency` (an ISO 4217 code on its document) names it; GBP when it has none
(the demo club is in the UK). Amounts are stored and computed as decimals without a
currency (`operations.fields`): this is only how a summary or an answer writes them.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Final

from opsgraph.store.scope import TenantScope

DEFAULT_CURRENCY: Final = "GBP"
SYMBOLS: Final[dict[str, str]] = {"GBP": "£", "EUR": "€", "USD": "$", "AUD": "A$",
                                  "CAD": "C$", "NZD": "NZ$", "IEP": "£"}


def currency_code(tenant: Mapping[str, object]) -> str:
    """The currency code a tenant's document names (GBP when it names none)."""
    code = tenant.get("currency")
    return code.strip().upper() if isinstance(code, str) and code.strip() else DEFAULT_CURRENCY


def tenant_currency(scope: TenantScope) -> str:
    """The tenant's currency code (GBP when it names none)."""
    return currency_code(scope.tenant() or {})


def money_words(scope: TenantScope, amount: Decimal | float | int | str) -> str:
    """`£30.00` in the tenant's currency."""
    return money_text(tenant_currency(scope), amount)


def money_text(code: str, amount: Decimal | float | int | str) -> str:
    """`£30.00`; a currency without a symbol here is written after the amount
    (`30.00 CHF`). ArithmeticError for text that is no amount."""
    value = Decimal(str(amount)).quantize(Decimal("0.01"))
    symbol = SYMBOLS.get(code)
    return f"{symbol}{value:,}" if symbol else f"{value:,} {code}"
