"""Models of /projects: projects of subscriptions."""

from __future__ import annotations

from ._base import WasdiModel


class ProjectEditorViewModel(WasdiModel):
    """The editable fields of a project."""

    project_id: str | None = None
    subscription_id: str | None = None
    name: str | None = None
    description: str | None = None
    target_user: str | None = None
    active_project: bool | None = None


class ProjectListViewModel(WasdiModel):
    """A project as listed for the user."""

    project_id: str | None = None
    subscription_name: str | None = None
    name: str | None = None
    description: str | None = None
    active_project: bool | None = None


class ProjectViewModel(WasdiModel):
    """One project."""

    project_id: str | None = None
    subscription_id: str | None = None
    name: str | None = None
    description: str | None = None
    active_project: bool | None = None
