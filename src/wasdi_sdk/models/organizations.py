"""Models of /organizations: organizations and their sharing."""

from __future__ import annotations

from ._base import WasdiModel


class OrganizationListViewModel(WasdiModel):
    """An organization as listed for the user."""

    organization_id: str
    owner_user_id: str | None = None
    name: str
    read_only: bool | None = None


class OrganizationEditorViewModel(WasdiModel):
    """The editable fields of an organization."""

    organization_id: str | None = None
    name: str | None = None
    description: str | None = None
    address: str | None = None
    email: str | None = None
    url: str | None = None


class OrganizationViewModel(WasdiModel):
    """One organization, with its shared users."""

    organization_id: str | None = None
    user_id: str | None = None
    name: str | None = None
    description: str | None = None
    address: str | None = None
    email: str | None = None
    url: str | None = None
    read_only: bool | None = None
    shared_users: list[str] | None = None


class OrganizationSharingViewModel(WasdiModel):
    """A sharing of an organization with a user."""

    organization_id: str | None = None
    user_id: str | None = None
    owner_id: str | None = None
    permissions: str | None = None
