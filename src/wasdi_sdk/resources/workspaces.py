"""``client.workspaces``: workspaces and their sharing (/ws)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from .._resource import APIResource, RequestOptions
from ..models import (
    PrimitiveResult,
    StringResult,
    WorkspaceEditorViewModel,
    WorkspaceListInfoViewModel,
    WorkspaceSharingViewModel,
)


class WorkspacesResource(APIResource):
    """/ws."""

    def list(self, **options: Unpack[RequestOptions]) -> list[WorkspaceListInfoViewModel]:
        """Workspaces the user owns or that are shared with them (an empty list is a valid answer)."""
        return cast(list[WorkspaceListInfoViewModel], self._call("workspaces.list", **options))

    def get(self, workspace: str, **options: Unpack[RequestOptions]) -> WorkspaceEditorViewModel:
        """One workspace.  ``EmptyResultError`` when it does not exist or is not accessible."""
        return cast(WorkspaceEditorViewModel, self._call("workspaces.get", query={"workspace": workspace},
                                                         **options))

    def create(self, *, name: str | None = None, node: str | None = None,
               **options: Unpack[RequestOptions]) -> StringResult:
        """Create a workspace; ``string_value`` is its id.  A taken name gets a ``(n)`` suffix."""
        return cast(StringResult, self._call("workspaces.create", query={"name": name, "node": node}, **options))

    def update(self, workspace: WorkspaceEditorViewModel,
               **options: Unpack[RequestOptions]) -> WorkspaceEditorViewModel:
        """Rename a workspace or change its visibility (write access needed)."""
        return cast(WorkspaceEditorViewModel, self._call("workspaces.update", body=workspace, **options))

    def rename(self, workspace: str, name: str, **options: Unpack[RequestOptions]) -> WorkspaceEditorViewModel:
        """Give a workspace a new name (a taken name gets a ``(n)`` suffix); the updated workspace."""
        current = self.get(workspace, **options)
        current.name = name
        return self.update(current, **options)

    def delete(self, workspace: str, *, deletefile: bool | None = None, deletelayer: bool | None = None,
               **options: Unpack[RequestOptions]) -> None:
        """Delete a workspace (its owner), or leave it (a user it is shared with)."""
        self._call("workspaces.delete", query={"workspace": workspace, "deletefile": deletefile,
                                               "deletelayer": deletelayer}, **options)

    def share_add(self, *, workspace: str, user_id: str, rights: str | None = None,
                  **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Share with a user; ``rights`` is ``read`` (default) or ``write``."""
        return cast(PrimitiveResult, self._call("workspaces.share_add",
                                                query={"workspace": workspace, "userId": user_id, "rights": rights},
                                                **options))

    def share_list(self, workspace: str, **options: Unpack[RequestOptions]) -> builtins.list[WorkspaceSharingViewModel]:
        """Sharings of a workspace (an empty list also when it is not accessible)."""
        return cast(builtins.list[WorkspaceSharingViewModel], self._call("workspaces.share_list",
                                                                query={"workspace": workspace}, **options))

    def share_delete(self, *, workspace: str, user_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Remove a user's sharing."""
        return cast(PrimitiveResult, self._call("workspaces.share_delete",
                                                query={"workspace": workspace, "userId": user_id}, **options))

    def name_by_id(self, workspace: str, **options: Unpack[RequestOptions]) -> str:
        """The workspace's name."""
        return cast(str, self._call("workspaces.name_by_id", query={"workspace": workspace}, **options))
