"""Models of /styles: map styles and their sharing."""

from __future__ import annotations

from ._base import WasdiModel, alias


class StyleViewModel(WasdiModel):
    """A map style (SLD) as listed for the user."""

    style_id: str
    name: str
    description: str | None = None
    is_public: bool | None = alias("isPublic", "public")
    user_id: str | None = None
    read_only: bool | None = None
    img_link: str | None = None
    shared_with_me: bool | None = None


class StyleSharingViewModel(WasdiModel):
    """A sharing of a style with a user."""

    user_id: str | None = None
    permissions: str | None = None
