"""Models of /admin: resource lookups, permissions, node metrics and user administration."""

from __future__ import annotations

from typing import Any

from ._base import WasdiModel


class GenericResourceViewModel(WasdiModel):
    """A resource of any type found by a partial-name search."""

    resource_type: str | None = None
    resource_id: str | None = None
    resource_name: str | None = None
    user_id: str | None = None


class UserResourcePermissionViewModel(WasdiModel):
    """A permission record: a user's rights on one resource."""

    resource_id: str | None = None
    resource_type: str | None = None
    user_id: str | None = None
    owner_id: str | None = None
    permissions: str | None = None
    created_by: str | None = None
    created_date: float | None = None
    """Epoch milliseconds."""


class MetricsEntry(WasdiModel):
    """Status metrics a node pushes: cpu, disks, memory and licences at a timestamp."""

    node: str | None = None
    timestamp: dict[str, Any] | None = None
    """``{seconds, millis}``."""
    cpu: dict[str, Any] | None = None
    """``{count: {physical, logical, total}, frequency: {hz, mhz, ghz}, load: {absolute, percentage}}``."""
    disks: list[dict[str, Any]] | None = None
    """One entry per mount point: ``{mountpoint, absolute, percentage}`` plus derived totals."""
    memory: dict[str, Any] | None = None
    """``{absolute, percentage}`` plus derived totals."""
    licenses: list[dict[str, Any]] | None = None
    """``[{name, status}]``."""


class UserListViewModel(WasdiModel):
    """One row of the admin user list."""

    user_id: str | None = None
    active: bool | None = None
    type: str | None = None
    last_login: str | None = None
    name: str | None = None
    surname: str | None = None
    public_nick_name: str | None = None


class UsersSummaryViewModel(WasdiModel):
    """Counts of users by subscription type, and of organizations."""

    total_users: int | None = None
    none_users: int | None = None
    free_users: int | None = None
    standard_users: int | None = None
    pro_users: int | None = None
    organizations: int | None = None


class FullUserViewModel(WasdiModel):
    """Everything the admin console shows and edits about a user."""

    user_id: str | None = None
    name: str | None = None
    surname: str | None = None
    link: str | None = None
    type: str | None = None
    role: str | None = None
    active: bool | None = None
    default_node: str | None = None
    registration_date: str | None = None
    confirmation_date: str | None = None
    last_login: str | None = None
    description: str | None = None
    public_nick_name: str | None = None
