"""Models of /credits: credit packages."""

from __future__ import annotations

from ._base import WasdiModel


class CreditsPackageViewModel(WasdiModel):
    """A credit package bought (or being bought) by a user."""

    credit_package_id: str | None = None
    name: str | None = None
    description: str | None = None
    type: str | None = None
    """The package type id, e.g. Fifty or OneHundred."""
    buy_date: float | None = None
    """Epoch milliseconds; 0.0 until the payment is confirmed."""
    user_id: str | None = None
    buy_success: bool | None = None
    credits_remaining: float | None = None
    last_update: float | None = None
    """Epoch milliseconds."""
