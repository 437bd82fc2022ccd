"""Generated from ``wasdi_sdk.resources.nodes`` by ``make async``: do not edit.

``client.nodes``: compute nodes and their sharing (/node)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import NodeFullViewModel, NodeSharingViewModel, NodeViewModel, PrimitiveResult
from .._resource import AsyncAPIResource


class AsyncNodesResource(AsyncAPIResource):
    """Async twin of ``NodesResource``: the same methods, awaited.

    /node.  Reading, creating, updating and sharing nodes is for admins."""

    async def list(self, *, all: bool | None = None, **options: Unpack[RequestOptions]) -> builtins.list[NodeViewModel]:
        """Nodes the user may run work on (admins: every active node); ``all=True`` adds inactive ones.

        ``EmptyResultError`` when the session is not valid (the service answers null).
        """
        return cast(builtins.list[NodeViewModel], await self._call("nodes.list", query={"all": all}, **options))

    async def get(self, node: str, **options: Unpack[RequestOptions]) -> NodeFullViewModel:
        """Everything about one node.  ``AuthenticationError`` for non-admins (the service answers 401),
        ``BadRequestError`` for an unknown node."""
        return cast(NodeFullViewModel, await self._call("nodes.get", query={"node": node}, **options))

    async def create(self, node: NodeFullViewModel, **options: Unpack[RequestOptions]) -> None:
        """Register a node; ``node_code`` is required and unique (``BadRequestError`` otherwise)."""
        await self._call("nodes.create", body=node, **options)

    async def update(self, node: NodeFullViewModel, **options: Unpack[RequestOptions]) -> None:
        """Change a registered node, e.g. ``active=False`` to hide it from users."""
        await self._call("nodes.update", body=node, **options)

    async def delete(self, node: str, **options: Unpack[RequestOptions]) -> None:
        """Remove a registered node and its sharings (admins; others get ``AuthenticationError``)."""
        await self._call("nodes.delete", query={"node": node}, **options)

    async def share_add(
        self, *, node: str, user_id: str, rights: str | None = None, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Share a node with a user (admins); ``string_value`` is ``Done`` or ``Already Shared.``."""
        return cast(
            PrimitiveResult,
            await self._call("nodes.share_add", query={"node": node, "userId": user_id, "rights": rights}, **options),
        )

    async def share_list(self, node: str, **options: Unpack[RequestOptions]) -> builtins.list[NodeSharingViewModel]:
        """Users a node is shared with (non-admins see only themselves; an empty list also on failure)."""
        return cast(
            builtins.list[NodeSharingViewModel], await self._call("nodes.share_list", query={"node": node}, **options)
        )

    async def share_delete(self, *, node: str, user_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Remove a user's sharing of a node (that user, or an admin)."""
        return cast(
            PrimitiveResult, await self._call("nodes.share_delete", query={"node": node, "userId": user_id}, **options)
        )
