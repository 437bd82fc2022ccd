"""Generated from ``wasdi_sdk.resources.package_manager`` by ``make async``: do not edit.

``client.package_manager``: the package environment of an app (/packageManager)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import PackageManagerViewModel, PackageViewModel
from .._resource import AsyncAPIResource


class AsyncPackageManagerResource(AsyncAPIResource):
    """Async twin of ``PackageManagerResource``: the same methods, awaited.

    /packageManager."""

    async def list_packages(self, name: str, **options: Unpack[RequestOptions]) -> builtins.list[PackageViewModel]:
        """The packages of the app's environment, sorted by name (``ServerError`` before its first build)."""
        return cast(
            builtins.list[PackageViewModel],
            await self._call("package_manager.list_packages", query={"name": name}, **options),
        )

    async def environment_actions(self, name: str, **options: Unpack[RequestOptions]) -> builtins.list[str]:
        """The history of the environment changes of an app (main node only)."""
        return cast(
            builtins.list[str], await self._call("package_manager.environment_actions", query={"name": name}, **options)
        )

    async def manager_version(self, name: str, **options: Unpack[RequestOptions]) -> PackageManagerViewModel | None:
        """The package manager of the app's environment and its version (``None`` when there is none)."""
        return cast(
            PackageManagerViewModel | None,
            await self._call("package_manager.manager_version", query={"name": name}, **options),
        )

    async def update_environment(
        self, *, processor_id: str, workspace: str, update_command: str | None = None, **options: Unpack[RequestOptions]
    ) -> None:
        """Queue a change of the environment: ``update_command`` is ``addPackage/NAME[/VERSION]``,
        ``upgradePackage/NAME[/VERSION]`` or ``removePackage/NAME``; none only refreshes the package list."""
        await self._call(
            "package_manager.update_environment",
            query={"processorId": processor_id, "workspace": workspace, "updateCommand": update_command},
            **options,
        )

    async def reset_actions(self, *, processor_id: str, workspace: str, **options: Unpack[RequestOptions]) -> None:
        """Empty the action history and rebuild the environment from ``pip.txt`` (main node only)."""
        await self._call(
            "package_manager.reset_actions", query={"processorId": processor_id, "workspace": workspace}, **options
        )
