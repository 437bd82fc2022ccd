"""Generated from ``wasdi_sdk._client`` by ``make async``: do not edit.

``WasdiClient``: the entry point of the SDK."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import httpx

from .._base_client import DEFAULT_MAX_RETRIES
from ..config import WasdiConfig, load_config
from ._base_client import AsyncBaseClient

if TYPE_CHECKING:
    from .._streams import FileSource, Progress
    from .._waiting import AsyncSleep
    from ..models import GeorefProductViewModel, ProcessWorkspaceViewModel
    from .events import AsyncEventsResource
    from .resources import (
        AsyncAdminResource,
        AsyncAuthResource,
        AsyncConsoleResource,
        AsyncCreditsResource,
        AsyncFileBufferResource,
        AsyncFilesResource,
        AsyncImagesResource,
        AsyncMapsResource,
        AsyncNodesResource,
        AsyncOrganizationsResource,
        AsyncPackageManagerResource,
        AsyncParamTemplatesResource,
        AsyncProcessesResource,
        AsyncProcessorMediaResource,
        AsyncProcessorsResource,
        AsyncProductsResource,
        AsyncProjectsResource,
        AsyncSearchResource,
        AsyncStylesResource,
        AsyncSubscriptionsResource,
        AsyncUtilityResource,
        AsyncWorkflowsResource,
        AsyncWorkspacesResource,
    )


class AsyncWasdiClient(AsyncBaseClient):
    """Async twin of ``WasdiClient``: the same methods, awaited.

    A client of one WASDI server.

    >>> with WasdiClient(base_url="http://127.0.0.1:8080") as client:
    ...     client.auth.login("me@example.org", "secret-password")
    ...     ws = client.workspaces.create(name="floods").string_value

    Groups are attributes (``client.auth``, ``client.workspaces`` ...).  Pass ``http_client`` to
    use your own ``httpx.Client`` (for example one over ``httpx.WSGITransport`` to drive a server
    in-process)."""

    config: WasdiConfig | None = None

    @cached_property
    def auth(self) -> AsyncAuthResource:
        """/auth: login, sessions, registration, profile, password, upload accounts."""
        from .resources.auth import AsyncAuthResource

        return AsyncAuthResource(self)

    @cached_property
    def apps(self) -> AsyncProcessorsResource:
        """/processors: apps: upload, deploy, run, logs, files and UI; the store, sharing and payments.

        The CLI's word (``wasdi apps``); ``client.processors`` is the same object, under the contract's word."""
        from .resources.processors import AsyncProcessorsResource

        return AsyncProcessorsResource(self)

    @property
    def processors(self) -> AsyncProcessorsResource:
        """``client.apps``, under the contract's word (``/processors``)."""
        return self.apps

    @cached_property
    def param_templates(self) -> AsyncParamTemplatesResource:
        """/processorParamTempl: reusable parameter templates of apps and their sharing."""
        from .resources.param_templates import AsyncParamTemplatesResource

        return AsyncParamTemplatesResource(self)

    @cached_property
    def processor_media(self) -> AsyncProcessorMediaResource:
        """/processormedia: app-store categories and publishers, reviews and comments."""
        from .resources.processor_media import AsyncProcessorMediaResource

        return AsyncProcessorMediaResource(self)

    @cached_property
    def package_manager(self) -> AsyncPackageManagerResource:
        """/packageManager: the package environment of an app."""
        from .resources.package_manager import AsyncPackageManagerResource

        return AsyncPackageManagerResource(self)

    @cached_property
    def processes(self) -> AsyncProcessesResource:
        """/process: process workspaces (runs), their status, payload, running time and queues."""
        from .resources.processes import AsyncProcessesResource

        return AsyncProcessesResource(self)

    @cached_property
    def credits(self) -> AsyncCreditsResource:
        """/credits: credit packages and their purchase."""
        from .resources.credits import AsyncCreditsResource

        return AsyncCreditsResource(self)

    @cached_property
    def images(self) -> AsyncImagesResource:
        """/images: image upload, retrieval, existence check and deletion; processor logo and gallery."""
        from .resources.images import AsyncImagesResource

        return AsyncImagesResource(self)

    @cached_property
    def admin(self) -> AsyncAdminResource:
        """/admin: the operators' console: lookups, permissions, users, node metrics, queue cleaning."""
        from .resources.admin import AsyncAdminResource

        return AsyncAdminResource(self)

    @cached_property
    def styles(self) -> AsyncStylesResource:
        """/styles: map styles (SLD files) and their sharing."""
        from .resources.styles import AsyncStylesResource

        return AsyncStylesResource(self)

    @cached_property
    def console(self) -> AsyncConsoleResource:
        """/console: the notebook console of a workspace (the web client's calls)."""
        from .resources.console import AsyncConsoleResource

        return AsyncConsoleResource(self)

    @cached_property
    def workflows(self) -> AsyncWorkflowsResource:
        """/workflows: SNAP graph workflows, their sharing and their runs."""
        from .resources.workflows import AsyncWorkflowsResource

        return AsyncWorkflowsResource(self)

    @cached_property
    def nodes(self) -> AsyncNodesResource:
        """/node: compute nodes and their sharing."""
        from .resources.nodes import AsyncNodesResource

        return AsyncNodesResource(self)

    @cached_property
    def organizations(self) -> AsyncOrganizationsResource:
        """/organizations: organizations and their sharing."""
        from .resources.organizations import AsyncOrganizationsResource

        return AsyncOrganizationsResource(self)

    @cached_property
    def subscriptions(self) -> AsyncSubscriptionsResource:
        """/subscriptions: subscriptions, their sharing and purchase."""
        from .resources.subscriptions import AsyncSubscriptionsResource

        return AsyncSubscriptionsResource(self)

    @cached_property
    def projects(self) -> AsyncProjectsResource:
        """/projects: projects of subscriptions and the active project."""
        from .resources.projects import AsyncProjectsResource

        return AsyncProjectsResource(self)

    @cached_property
    def products(self) -> AsyncProductsResource:
        """/product: products inside workspaces (streamed uploads)."""
        from .resources.products import AsyncProductsResource

        return AsyncProductsResource(self)

    @cached_property
    def file_buffer(self) -> AsyncFileBufferResource:
        """/filebuffer: imports into a workspace, band publishing, copies between workspaces."""
        from .resources.file_buffer import AsyncFileBufferResource

        return AsyncFileBufferResource(self)

    @cached_property
    def files(self) -> AsyncFilesResource:
        """/catalog: workspace files as the official library reaches them (streamed downloads)."""
        from .resources.files import AsyncFilesResource

        return AsyncFilesResource(self)

    @cached_property
    def search(self) -> AsyncSearchResource:
        """/search: queries against the data providers (query strings: ``wasdi_sdk.search_query``)."""
        from .resources.search import AsyncSearchResource

        return AsyncSearchResource(self)

    @cached_property
    def maps(self) -> AsyncMapsResource:
        """This server's WMS (outside the contract): published bands as map layers for map clients."""
        from .resources.maps import AsyncMapsResource

        return AsyncMapsResource(self)

    @cached_property
    def events(self) -> AsyncEventsResource:
        """The server's messages about a workspace, live (STOMP over WebSocket, outside the contract)."""
        from .events import AsyncEventsResource

        return AsyncEventsResource(self)

    @cached_property
    def utility(self) -> AsyncUtilityResource:
        """/wasdi: health check and feedback."""
        from .resources.utility import AsyncUtilityResource

        return AsyncUtilityResource(self)

    @cached_property
    def workspaces(self) -> AsyncWorkspacesResource:
        """/ws: workspaces and their sharing."""
        from .resources.workspaces import AsyncWorkspacesResource

        return AsyncWorkspacesResource(self)

    async def wait_for_process(
        self,
        process_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float = 1.0,
        max_interval: float = 10.0,
        raise_on_failure: bool = True,
        on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
        sleep: AsyncSleep | None = None,
    ) -> ProcessWorkspaceViewModel:
        """Wait until a process is DONE (or raise on ERROR/STOPPED); see ``client.processes.wait``."""
        return await self.processes.wait(
            process_id,
            timeout=timeout,
            poll_interval=poll_interval,
            max_interval=max_interval,
            raise_on_failure=raise_on_failure,
            on_update=on_update,
            sleep=sleep,
        )

    async def upload_and_ingest(
        self,
        workspace: str,
        file: FileSource,
        *,
        name: str | None = None,
        style: str | None = None,
        platform: str | None = None,
        timeout: float | None = None,
        poll_interval: float = 0.5,
        on_progress: Progress | None = None,
        on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
    ) -> GeorefProductViewModel:
        """Upload a file and wait until it is a product; see ``wasdi_sdk.transfer.upload_and_ingest``."""
        from .transfer import upload_and_ingest

        return await upload_and_ingest(
            self,
            workspace,
            file,
            name=name,
            style=style,
            platform=platform,
            timeout=timeout,
            poll_interval=poll_interval,
            on_progress=on_progress,
            on_update=on_update,
        )

    async def import_and_wait(
        self,
        workspace: str,
        file_url: str,
        *,
        name: str | None = None,
        provider: str | None = None,
        platform: str | None = None,
        bbox: str | None = None,
        timeout: float | None = None,
        poll_interval: float = 0.5,
        on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
    ) -> ProcessWorkspaceViewModel | None:
        """Import a remote file and wait for it; see ``wasdi_sdk.transfer.import_and_wait``."""
        from .transfer import import_and_wait

        return await import_and_wait(
            self,
            workspace,
            file_url,
            name=name,
            provider=provider,
            platform=platform,
            bbox=bbox,
            timeout=timeout,
            poll_interval=poll_interval,
            on_update=on_update,
        )

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    @classmethod
    async def from_config(
        cls,
        path: str | Path | None = None,
        *,
        login: bool = True,
        base_url: str | None = None,
        session_token: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = DEFAULT_MAX_RETRIES,
        http_client: httpx.AsyncClient | None = None,
        default_headers: Mapping[str, str] | None = None,
    ) -> AsyncWasdiClient:
        """A client set up the way the official ``wasdi`` library would be.

        Reads the library's ``config.json`` (``USER``, ``PASSWORD``, ``BASEURL``, ``SESSIONID``,
        ``WORKSPACE``, ``WORKSPACEID``, ``REQUESTSTIMEOUT``) and the ``WASDI_*`` environment
        variables with the library's precedence.  With ``login`` and no session, logs in with
        ``USER``/``PASSWORD``.  The settings stay available as ``client.config`` (whose repr never shows the
        password or the session).  The other arguments are the constructor's; given, they win over the file.
        """
        config = load_config(path)
        if timeout is None and config.timeout is not None:
            timeout = config.timeout
        client = cls(
            base_url=base_url or config.base_url,
            session_token=session_token or config.session_id,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
            default_headers=default_headers,
        )
        client.config = config
        if login and (not client.session_token) and config.user and config.password:
            await client.auth.login(config.user, config.password)
        return client
