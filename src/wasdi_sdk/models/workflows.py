"""Models of /workflows: graph workflows and their sharing."""

from __future__ import annotations

from typing import Any

from ._base import WasdiModel, alias


class SnapWorkflowViewModel(WasdiModel):
    """A graph workflow, with its input and output nodes (also the body of a run)."""

    workflow_id: str | None = None
    name: str | None = None
    description: str | None = None
    is_public: bool | None = alias("isPublic", "public")
    user_id: str | None = None
    node_url: str | None = None
    shared_with_me: bool | None = None
    read_only: bool | None = None
    input_node_names: list[str] | None = None
    input_file_names: list[str] | None = None
    output_node_names: list[str] | None = None
    output_file_names: list[str] | None = None
    template_params: dict[str, Any] | None = None
    last_update: float | None = None
    """Epoch milliseconds."""


class WorkflowSharingViewModel(WasdiModel):
    """A sharing of a workflow with a user."""

    user_id: str | None = None
    permissions: str | None = None
