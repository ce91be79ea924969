"""Numbers a caller writes in a header or a query: ASCII digits, at most 2^63 - 1."""

from __future__ import annotations

import pytest

from opsgraph.api.numbers import MAX_INT64, ascii_number, parse_number
from opsgraph.errors import BadInput


@pytest.mark.parametrize(("raw", "value"), [("0", 0), (" 42 ", 42), (str(MAX_INT64), MAX_INT64)])
def test_ascii_digits_are_read(raw: str, value: int) -> None:
    assert ascii_number(raw) == value


@pytest.mark.parametrize("raw", ["", " ", "²", "٣", "１", "-1", "+1", "1e3", "1_000", "0x10",
                                 str(MAX_INT64 + 1), "9" * 40, "\xb2", "1\n"])
def test_anything_else_is_none_and_a_400_naming_the_field(raw: str) -> None:
    assert ascii_number(raw) is None
    with pytest.raises(BadInput, match=r"^after: .*ASCII digits") as refused:
        parse_number(raw, "after", "an event id")
    assert refused.value.detail["field"] == "after"


def test_a_bound_below_64_bits_holds() -> None:
    assert ascii_number("65535", maximum=65535) == 65535
    assert ascii_number("65536", maximum=65535) is None
