"""Which prices "cheapest" compares, in one place for ``plan``'s verdict and the explorer's Compare
caption: on-demand list prices (each preset's ``price_source`` names the provider and the date read) and the user's
own ``--price-per-hour``; a serverless per-second price (billed only while work runs, scale to zero) or an unstated
one is a different kind of price and is left out by name. No Textual here."""

from __future__ import annotations

COMPARABLE_PRICE_BASES = ("on-demand", "--price-per-hour")
PRICE_BASIS_WORDS = ("on-demand list prices per device-hour (the provider and date in each price_source) or "
                     "--price-per-hour; serverless per-second prices left out")


def comparable_price(basis: str | None) -> bool:
    """True for a price "cheapest" may compare: an on-demand list price or the user's own."""
    return basis in COMPARABLE_PRICE_BASES
