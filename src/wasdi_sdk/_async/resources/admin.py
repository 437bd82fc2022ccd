"""Generated from ``wasdi_sdk.resources.admin`` by ``make async``: do not edit.

``client.admin``: the operators' console (/admin): lookups, permissions, users, node metrics, queue cleaning.

Every call needs an admin's session (``PermissionDeniedError`` otherwise), except the listing of
permissions, which any user may make for MISSION records.  Failures come as HTTP statuses (style A)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import (
    DeployedProcessorViewModel,
    FullUserViewModel,
    GenericResourceViewModel,
    MetricsEntry,
    SuccessResponse,
    UserListViewModel,
    UserResourcePermissionViewModel,
    UsersSummaryViewModel,
    UserViewModel,
    WorkspaceListInfoViewModel,
)
from ...resources.admin import closed_count
from .._resource import AsyncAPIResource


class AsyncAdminResource(AsyncAPIResource):
    """Async twin of ``AdminResource``: the same methods, awaited.

    /admin.  Partial names need at least 3 characters (``BadRequestError`` otherwise)."""

    async def find_users(self, partial_name: str, **options: Unpack[RequestOptions]) -> builtins.list[UserViewModel]:
        """Users whose id, name or surname contains ``partial_name`` (any case); roles come capitalised."""
        return cast(
            builtins.list[UserViewModel],
            await self._call("admin.find_users", query={"partialName": partial_name}, **options),
        )

    async def find_workspaces(
        self, partial_name: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[WorkspaceListInfoViewModel]:
        """Workspaces of any user whose name contains ``partial_name``."""
        return cast(
            builtins.list[WorkspaceListInfoViewModel],
            await self._call("admin.find_workspaces", query={"partialName": partial_name}, **options),
        )

    async def find_processors(
        self, partial_name: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[DeployedProcessorViewModel]:
        """Apps (processors) of any user whose name contains ``partial_name``."""
        return cast(
            builtins.list[DeployedProcessorViewModel],
            await self._call("admin.find_processors", query={"partialName": partial_name}, **options),
        )

    async def find_resources(
        self,
        *,
        resource_type: str,
        partial_name: str,
        offset: int | None = None,
        limit: int | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[GenericResourceViewModel]:
        """One page (default: the first 10) of resources of a type whose name contains ``partial_name``.

        ``resource_type`` is WORKSPACE, PROCESSOR, SUBSCRIPTION, ORGANIZATION, WORKFLOW or STYLE.
        """
        return cast(
            builtins.list[GenericResourceViewModel],
            await self._call(
                "admin.find_resources",
                query={"resourceType": resource_type, "partialName": partial_name, "offset": offset, "limit": limit},
                **options,
            ),
        )

    async def list_resource_permissions(
        self,
        *,
        resource_type: str | None = None,
        resource_id: str | None = None,
        user_id: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[UserResourcePermissionViewModel]:
        """Permission (sharing) records matching every criterion given; at least one is needed.

        Non-admins may only ask for type ``MISSION``.  An empty list is a valid answer.
        """
        return cast(
            builtins.list[UserResourcePermissionViewModel],
            await self._call(
                "admin.list_resource_permissions",
                query={"resourceType": resource_type, "resourceId": resource_id, "userId": user_id},
                **options,
            ),
        )

    async def add_resource_permission(
        self,
        *,
        resource_type: str,
        resource_id: str,
        user_id: str,
        rights: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Share a resource with a user through the share rules of its type (``rights``: read or write); admins
        only: owners share through the type's own share call (``client.workspaces.share`` ...)."""
        await self._call(
            "admin.add_resource_permission",
            query={"resourceType": resource_type, "resourceId": resource_id, "userId": user_id, "rights": rights},
            **options,
        )

    async def remove_resource_permission(
        self, *, resource_type: str, resource_id: str, user_id: str, **options: Unpack[RequestOptions]
    ) -> None:
        """Remove a user's permission on a resource through the unshare rules of its type (admins only)."""
        await self._call(
            "admin.remove_resource_permission",
            query={"resourceType": resource_type, "resourceId": resource_id, "userId": user_id},
            **options,
        )

    async def resource_types(self, **options: Unpack[RequestOptions]) -> builtins.list[str]:
        """The resource types permissions exist for."""
        return cast(builtins.list[str], await self._call("admin.resource_types", **options))

    async def push_metrics(self, entry: MetricsEntry, **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Store a node's metrics (``entry.node`` names the node); replaces its previous entry."""
        return cast(SuccessResponse, await self._call("admin.push_metrics", body=entry, **options))

    async def latest_metrics(self, *, node_code: str | None = None, **options: Unpack[RequestOptions]) -> MetricsEntry:
        """The latest metrics of a node, or the newest of any node without ``node_code``.

        ``EmptyResultError`` when there are none.
        """
        return cast(MetricsEntry, await self._call("admin.latest_metrics", query={"nodeCode": node_code}, **options))

    async def list_users(
        self,
        *,
        partial_name: str | None = None,
        offset: int | None = None,
        limit: int | None = None,
        sortedby: str | None = None,
        order: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[UserListViewModel]:
        """A page of users (default the first 10), sorted by ``name``, ``surname`` or ``userId``;
        ``order="desc"`` descends."""
        return cast(
            builtins.list[UserListViewModel],
            await self._call(
                "admin.list_users",
                query={
                    "partialName": partial_name,
                    "offset": offset,
                    "limit": limit,
                    "sortedby": sortedby,
                    "order": order,
                },
                **options,
            ),
        )

    async def users_summary(self, **options: Unpack[RequestOptions]) -> UsersSummaryViewModel:
        """How many users there are, by subscription type, and how many organizations."""
        return cast(UsersSummaryViewModel, await self._call("admin.users_summary", **options))

    async def get_user(self, user_id: str, **options: Unpack[RequestOptions]) -> FullUserViewModel:
        """Everything about one user; ``BadRequestError`` when unknown."""
        return cast(FullUserViewModel, await self._call("admin.get_user", query={"userId": user_id}, **options))

    async def update_user(self, user: FullUserViewModel, **options: Unpack[RequestOptions]) -> None:
        """Edit the user ``user.user_id``: name, surname, role, description, link, default node, public
        nickname, registration date (members left ``None`` stay as they are)."""
        await self._call("admin.update_user", body=user, **options)

    async def delete_user(self, user_id: str, **options: Unpack[RequestOptions]) -> None:
        """Delete a user and everything they own, irreversibly (not the caller's own account)."""
        await self._call("admin.delete_user", query={"userId": user_id}, **options)

    async def clean_processes_queue(self, **options: Unpack[RequestOptions]) -> int | None:
        """Move every process of the node still CREATED to ERROR; how many it moved (``None`` from a server
        that does not say)."""
        answer = await self._client.call("admin.clean_processes_queue", raw=True, **options)
        return answer if self._raw else closed_count(answer)

    async def clean_old_processes(self, **options: Unpack[RequestOptions]) -> int | None:
        """Move stale RUNNING, WAITING or READY processes (worker gone, or unchanged too long) to ERROR; how many
        it moved (``None`` from a server that does not say)."""
        answer = await self._client.call("admin.clean_old_processes", raw=True, **options)
        return answer if self._raw else closed_count(answer)
