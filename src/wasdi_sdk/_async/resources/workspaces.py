"""Generated from ``wasdi_sdk.resources.workspaces`` by ``make async``: do not edit.

``client.workspaces``: workspaces and their sharing (/ws)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._exceptions import NotFoundError, UnknownIdError
from ..._lookup import find_one
from ..._resource import RequestOptions
from ...models import (
    PrimitiveResult,
    StringResult,
    WorkspaceEditorViewModel,
    WorkspaceListInfoViewModel,
    WorkspaceSharingViewModel,
)
from .._resource import AsyncAPIResource


class AsyncWorkspacesResource(AsyncAPIResource):
    """Async twin of ``WorkspacesResource``: the same methods, awaited.

    /ws."""

    async def list(self, **options: Unpack[RequestOptions]) -> list[WorkspaceListInfoViewModel]:
        """Workspaces the user owns or that are shared with them (an empty list is a valid answer)."""
        return cast(list[WorkspaceListInfoViewModel], await self._call("workspaces.list", **options))

    async def find(self, name: str, **options: Unpack[RequestOptions]) -> WorkspaceListInfoViewModel:
        """The workspace named ``name`` among the user's (``NotFoundError`` naming it when there is none,
        ``ConflictError`` when several have that name)."""
        listed = await self.list(**options)
        return find_one(
            listed,
            name,
            name_of=lambda w: w.name,
            id_of=lambda w: w.workspace_id,
            noun="workspace",
            call=f"client.workspaces.find({name!r})",
        )

    async def resolve(self, workspace: str, **options: Unpack[RequestOptions]) -> str:
        """The id of the workspace ``workspace`` is the id or the name of: itself when it is the id of a workspace
        the user may read, else the id of the one so named; ``NotFoundError`` naming it when it is neither."""
        listed = await self.list(**options)
        if any(w.workspace_id == workspace for w in listed):
            return workspace
        if any(w.name == workspace for w in listed):
            return find_one(
                listed,
                workspace,
                name_of=lambda w: w.name,
                id_of=lambda w: w.workspace_id,
                noun="workspace",
                call=f"client.workspaces.resolve({workspace!r})",
            ).workspace_id
        try:
            await self.get(workspace, **options)
        except UnknownIdError as e:
            asked = f"client.workspaces.resolve({workspace!r})"
            raise NotFoundError(
                f"no workspace {workspace!r}, by id or by name, that this user may read ({asked})",
                style=e.style,
                body=e.body,
                response=e.response,
                endpoint=e.endpoint,
            ) from e
        return workspace

    async def get(self, workspace: str, **options: Unpack[RequestOptions]) -> WorkspaceEditorViewModel:
        """One workspace.  ``UnknownIdError`` (a ``NotFoundError``) naming it when it does not exist or is not
        accessible; ``AuthenticationError`` when the session is not valid any more."""
        return cast(
            WorkspaceEditorViewModel, await self._call("workspaces.get", query={"workspace": workspace}, **options)
        )

    async def create(
        self, *, name: str | None = None, node: str | None = None, **options: Unpack[RequestOptions]
    ) -> StringResult:
        """Create a workspace; ``string_value`` is its id.  A taken name gets a ``(n)`` suffix."""
        return cast(StringResult, await self._call("workspaces.create", query={"name": name, "node": node}, **options))

    async def update(
        self, workspace: WorkspaceEditorViewModel, **options: Unpack[RequestOptions]
    ) -> WorkspaceEditorViewModel:
        """Rename a workspace or change its visibility (write access needed)."""
        return cast(WorkspaceEditorViewModel, await self._call("workspaces.update", body=workspace, **options))

    async def rename(self, workspace: str, name: str, **options: Unpack[RequestOptions]) -> WorkspaceEditorViewModel:
        """Give a workspace a new name (a taken name gets a ``(n)`` suffix); the updated workspace."""
        current = await self.get(workspace, **options)
        current.name = name
        return await self.update(current, **options)

    async def delete(
        self,
        workspace: str,
        *,
        deletefile: bool | None = None,
        deletelayer: bool | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Delete a workspace (its owner), or leave it (a user it is shared with)."""
        await self._call(
            "workspaces.delete",
            query={"workspace": workspace, "deletefile": deletefile, "deletelayer": deletelayer},
            **options,
        )

    async def share_add(
        self, *, workspace: str, user_id: str, rights: str | None = None, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Share with a user; ``rights`` is ``read`` (default) or ``write``."""
        return cast(
            PrimitiveResult,
            await self._call(
                "workspaces.share_add", query={"workspace": workspace, "userId": user_id, "rights": rights}, **options
            ),
        )

    async def share_list(
        self, workspace: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[WorkspaceSharingViewModel]:
        """Sharings of a workspace (an empty list also when it is not accessible)."""
        return cast(
            builtins.list[WorkspaceSharingViewModel],
            await self._call("workspaces.share_list", query={"workspace": workspace}, **options),
        )

    async def share_delete(self, *, workspace: str, user_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Remove a user's sharing."""
        return cast(
            PrimitiveResult,
            await self._call("workspaces.share_delete", query={"workspace": workspace, "userId": user_id}, **options),
        )

    async def name_by_id(self, workspace: str, **options: Unpack[RequestOptions]) -> str:
        """The workspace's name."""
        return cast(str, await self._call("workspaces.name_by_id", query={"workspace": workspace}, **options))
