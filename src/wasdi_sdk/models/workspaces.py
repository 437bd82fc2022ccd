"""Models of /ws: workspaces and their sharing."""

from __future__ import annotations

from ._base import WasdiModel, alias


class WorkspaceListInfoViewModel(WasdiModel):
    """A workspace as listed for the user (``client.workspaces.list()``)."""

    workspace_id: str
    name: str = alias("workspaceName", required=True)
    """The workspace's name (wire ``workspaceName``; ``name`` as on ``WorkspaceEditorViewModel``)."""
    owner_user_id: str
    shared_users: list[str] | None = None
    active_node: bool | None = None
    node_code: str | None = None
    creation_date: int | None = None
    """Epoch milliseconds."""
    storage_size: str | None = None
    is_public: bool | None = alias("isPublic", "public")
    read_only: bool | None = None


class WorkspaceEditorViewModel(WasdiModel):
    """One workspace (``client.workspaces.get()``), also the body of an update: a request may leave any field
    out, so every field is optional here (the answer always carries ``workspaceId`` and ``name``)."""

    workspace_id: str | None = None
    name: str | None = None
    user_id: str | None = None
    api_url: str | None = None
    creation_date: int | None = None
    """Epoch milliseconds."""
    last_edit_date: int | None = None
    """Epoch milliseconds."""
    shared_users: list[str] | None = None
    node_code: str | None = None
    active_node: bool | None = None
    processes_count: int | None = None
    cloud_provider: str | None = None
    sla_link: str | None = None
    storage_size: str | None = None
    is_public: bool | None = alias("isPublic", "public")
    read_only: bool | None = None


class WorkspaceSharingViewModel(WasdiModel):
    workspace_id: str | None = None
    user_id: str | None = None
    owner_id: str | None = None
    permissions: str | None = None
