"""Generated from ``wasdi_sdk.resources.projects`` by ``make async``: do not edit.

``client.projects``: projects of subscriptions and the active project (/projects)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import ProjectEditorViewModel, ProjectListViewModel, ProjectViewModel, SuccessResponse
from .._resource import AsyncAPIResource


class AsyncProjectsResource(AsyncAPIResource):
    """Async twin of ``ProjectsResource``: the same methods, awaited.

    /projects.

    Access to a project follows access to its subscription: reading needs read access, changing
    needs write access (``PermissionDeniedError`` otherwise).  The active project (and with it the
    active subscription) is what runs are accounted to."""

    async def list(
        self, *, valid: bool | None = None, **options: Unpack[RequestOptions]
    ) -> builtins.list[ProjectListViewModel]:
        """Projects of the user's subscriptions (``valid``: of valid subscriptions only); when no
        project is active, the first becomes active (an empty list is a valid answer)."""
        return cast(
            builtins.list[ProjectListViewModel], await self._call("projects.list", query={"valid": valid}, **options)
        )

    async def list_by_subscription(
        self, subscription: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[ProjectListViewModel]:
        """Projects of one subscription."""
        return cast(
            builtins.list[ProjectListViewModel],
            await self._call("projects.list_by_subscription", query={"subscription": subscription}, **options),
        )

    async def get(self, project: str, **options: Unpack[RequestOptions]) -> ProjectViewModel:
        """One project."""
        return cast(ProjectViewModel, await self._call("projects.get", query={"project": project}, **options))

    async def create(
        self,
        project: ProjectEditorViewModel | None = None,
        *,
        subscription_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        active_project: bool | None = None,
        target_user: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> SuccessResponse:
        """Create a project in a subscription you can write; ``message`` is its id.

        A name already used in the subscription gets a ``(n)`` suffix.  ``active_project=True`` makes
        it the active project of ``target_user`` (default: you; another user needs admin).
        """
        if project is None:
            project = ProjectEditorViewModel(
                subscription_id=subscription_id,
                name=name,
                description=description,
                active_project=active_project,
                target_user=target_user,
            )
        return cast(SuccessResponse, await self._call("projects.create", body=project, **options))

    async def update(
        self,
        project: ProjectEditorViewModel | None = None,
        *,
        project_id: str | None = None,
        subscription_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        active_project: bool | None = None,
        target_user: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> SuccessResponse:
        """Change a project; ``message`` is its id.  Fields left ``None`` keep their value.

        ``active_project=True`` makes it active; ``False`` on the active project clears the active
        project and subscription.
        """
        if project is None:
            project = ProjectEditorViewModel(
                project_id=project_id,
                subscription_id=subscription_id,
                name=name,
                description=description,
                active_project=active_project,
                target_user=target_user,
            )
        return cast(SuccessResponse, await self._call("projects.update", body=project, **options))

    async def set_active(
        self, *, project: str | None = None, target: str | None = None, **options: Unpack[RequestOptions]
    ) -> SuccessResponse:
        """Make ``project`` the active project (and its subscription the active one) of ``target``
        (default: you; another user needs admin); no ``project`` clears both."""
        return cast(
            SuccessResponse,
            await self._call("projects.set_active", query={"project": project, "target": target}, **options),
        )

    async def delete(self, project: str, **options: Unpack[RequestOptions]) -> SuccessResponse:
        """Delete a project (write access to its subscription); ``message`` is its id."""
        return cast(SuccessResponse, await self._call("projects.delete", query={"project": project}, **options))
