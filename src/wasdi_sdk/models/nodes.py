"""Models of /node: compute nodes and their sharing."""

from __future__ import annotations

from ._base import WasdiModel


class NodeViewModel(WasdiModel):
    """A compute node as listed for users."""

    node_code: str | None = None
    cloud_provider: str | None = None
    api_url: str | None = None


class NodeFullViewModel(WasdiModel):
    """Everything about a compute node (admin view)."""

    node_code: str | None = None
    cloud_provider: str | None = None
    api_url: str | None = None
    node_description: str | None = None
    node_geoserver_address: str | None = None
    active: bool | None = None
    shared: bool | None = None


class NodeSharingViewModel(WasdiModel):
    """A sharing of a node with a user."""

    node_code: str | None = None
    user_id: str | None = None
