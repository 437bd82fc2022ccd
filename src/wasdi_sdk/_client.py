"""``WasdiClient``: the entry point of the SDK."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

import httpx

from ._base_client import DEFAULT_MAX_RETRIES, BaseClient
from .config import WasdiConfig, load_config

if TYPE_CHECKING:  # each group's module (and the models it uses) is imported when the group is first used
    from ._streams import FileSource, Progress
    from ._waiting import Sleep
    from .models import GeorefProductViewModel, ProcessWorkspaceViewModel
    from .resources import (
        AdminResource,
        AuthResource,
        ConsoleResource,
        CreditsResource,
        EventsResource,
        FileBufferResource,
        FilesResource,
        ImagesResource,
        MapsResource,
        NodesResource,
        OrganizationsResource,
        PackageManagerResource,
        ParamTemplatesResource,
        ProcessesResource,
        ProcessorMediaResource,
        ProcessorsResource,
        ProductsResource,
        ProjectsResource,
        SearchResource,
        StylesResource,
        SubscriptionsResource,
        UtilityResource,
        WorkflowsResource,
        WorkspacesResource,
    )


class WasdiClient(BaseClient):
    """A client of one WASDI server.

    >>> with WasdiClient(base_url="http://127.0.0.1:8080") as client:
    ...     client.auth.login("me@example.org", "secret-password")
    ...     ws = client.workspaces.create(name="floods").string_value

    Groups are attributes (``client.auth``, ``client.workspaces`` ...).  Pass ``http_client`` to
    use your own ``httpx.Client`` (for example one over ``httpx.WSGITransport`` to drive a server
    in-process).
    """

    config: WasdiConfig | None = None

    @cached_property
    def auth(self) -> AuthResource:
        """/auth: login, sessions, registration, profile, password, upload accounts."""
        from .resources.auth import AuthResource

        return AuthResource(self)

    @cached_property
    def apps(self) -> ProcessorsResource:
        """/processors: apps: upload, deploy, run, logs, files and UI; the store, sharing and payments.

        The CLI's word (``wasdi apps``); ``client.processors`` is the same object, under the contract's word."""
        from .resources.processors import ProcessorsResource

        return ProcessorsResource(self)

    @property
    def processors(self) -> ProcessorsResource:
        """``client.apps``, under the contract's word (``/processors``)."""
        return self.apps

    @cached_property
    def param_templates(self) -> ParamTemplatesResource:
        """/processorParamTempl: reusable parameter templates of apps and their sharing."""
        from .resources.param_templates import ParamTemplatesResource

        return ParamTemplatesResource(self)

    @cached_property
    def processor_media(self) -> ProcessorMediaResource:
        """/processormedia: app-store categories and publishers, reviews and comments."""
        from .resources.processor_media import ProcessorMediaResource

        return ProcessorMediaResource(self)

    @cached_property
    def package_manager(self) -> PackageManagerResource:
        """/packageManager: the package environment of an app."""
        from .resources.package_manager import PackageManagerResource

        return PackageManagerResource(self)

    @cached_property
    def processes(self) -> ProcessesResource:
        """/process: process workspaces (runs), their status, payload, running time and queues."""
        from .resources.processes import ProcessesResource

        return ProcessesResource(self)

    @cached_property
    def credits(self) -> CreditsResource:
        """/credits: credit packages and their purchase."""
        from .resources.credits import CreditsResource

        return CreditsResource(self)

    @cached_property
    def images(self) -> ImagesResource:
        """/images: image upload, retrieval, existence check and deletion; processor logo and gallery."""
        from .resources.images import ImagesResource

        return ImagesResource(self)

    @cached_property
    def admin(self) -> AdminResource:
        """/admin: the operators' console: lookups, permissions, users, node metrics, queue cleaning."""
        from .resources.admin import AdminResource

        return AdminResource(self)

    @cached_property
    def styles(self) -> StylesResource:
        """/styles: map styles (SLD files) and their sharing."""
        from .resources.styles import StylesResource

        return StylesResource(self)

    @cached_property
    def console(self) -> ConsoleResource:
        """/console: the notebook console of a workspace (the web client's calls)."""
        from .resources.console import ConsoleResource

        return ConsoleResource(self)

    @cached_property
    def workflows(self) -> WorkflowsResource:
        """/workflows: SNAP graph workflows, their sharing and their runs."""
        from .resources.workflows import WorkflowsResource

        return WorkflowsResource(self)

    @cached_property
    def nodes(self) -> NodesResource:
        """/node: compute nodes and their sharing."""
        from .resources.nodes import NodesResource

        return NodesResource(self)

    @cached_property
    def organizations(self) -> OrganizationsResource:
        """/organizations: organizations and their sharing."""
        from .resources.organizations import OrganizationsResource

        return OrganizationsResource(self)

    @cached_property
    def subscriptions(self) -> SubscriptionsResource:
        """/subscriptions: subscriptions, their sharing and purchase."""
        from .resources.subscriptions import SubscriptionsResource

        return SubscriptionsResource(self)

    @cached_property
    def projects(self) -> ProjectsResource:
        """/projects: projects of subscriptions and the active project."""
        from .resources.projects import ProjectsResource

        return ProjectsResource(self)

    @cached_property
    def products(self) -> ProductsResource:
        """/product: products inside workspaces (streamed uploads)."""
        from .resources.products import ProductsResource

        return ProductsResource(self)

    @cached_property
    def file_buffer(self) -> FileBufferResource:
        """/filebuffer: imports into a workspace, band publishing, copies between workspaces."""
        from .resources.file_buffer import FileBufferResource

        return FileBufferResource(self)

    @cached_property
    def files(self) -> FilesResource:
        """/catalog: workspace files as the official library reaches them (streamed downloads)."""
        from .resources.files import FilesResource

        return FilesResource(self)

    @cached_property
    def search(self) -> SearchResource:
        """/search: queries against the data providers (query strings: ``wasdi_sdk.search_query``)."""
        from .resources.search import SearchResource

        return SearchResource(self)

    @cached_property
    def maps(self) -> MapsResource:
        """This server's WMS (outside the contract): published bands as map layers for map clients."""
        from .resources.maps import MapsResource

        return MapsResource(self)

    @cached_property
    def events(self) -> EventsResource:
        """The server's messages about a workspace, live (STOMP over WebSocket, outside the contract)."""
        from .resources.events import EventsResource

        return EventsResource(self)

    @cached_property
    def utility(self) -> UtilityResource:
        """/wasdi: health check and feedback."""
        from .resources.utility import UtilityResource

        return UtilityResource(self)

    @cached_property
    def workspaces(self) -> WorkspacesResource:
        """/ws: workspaces and their sharing."""
        from .resources.workspaces import WorkspacesResource

        return WorkspacesResource(self)

    def wait_for_process(self, process_id: str, *, timeout: float | None = None, poll_interval: float = 1.0,
                         max_interval: float = 10.0, raise_on_failure: bool = True,
                         on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
                         sleep: Sleep | None = None) -> ProcessWorkspaceViewModel:
        """Wait until a process is DONE (or raise on ERROR/STOPPED); see ``client.processes.wait``."""
        return self.processes.wait(process_id, timeout=timeout, poll_interval=poll_interval,
                                   max_interval=max_interval, raise_on_failure=raise_on_failure,
                                   on_update=on_update, sleep=sleep)

    def upload_and_ingest(self, workspace: str, file: FileSource, *, name: str | None = None,
                          style: str | None = None, platform: str | None = None, timeout: float | None = None,
                          poll_interval: float = 0.5, on_progress: Progress | None = None,
                          on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
                          ) -> GeorefProductViewModel:
        """Upload a file and wait until it is a product; see ``wasdi_sdk.transfer.upload_and_ingest``."""
        from .transfer import upload_and_ingest

        return upload_and_ingest(self, workspace, file, name=name, style=style, platform=platform, timeout=timeout,
                                 poll_interval=poll_interval, on_progress=on_progress, on_update=on_update)

    def import_and_wait(self, workspace: str, file_url: str, *, name: str | None = None, provider: str | None = None,
                        platform: str | None = None, bbox: str | None = None, timeout: float | None = None,
                        poll_interval: float = 0.5,
                        on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
                        ) -> ProcessWorkspaceViewModel | None:
        """Import a remote file and wait for it; see ``wasdi_sdk.transfer.import_and_wait``."""
        from .transfer import import_and_wait

        return import_and_wait(self, workspace, file_url, name=name, provider=provider, platform=platform, bbox=bbox,
                               timeout=timeout, poll_interval=poll_interval, on_update=on_update)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @classmethod
    def from_config(cls, path: str | Path | None = None, *, login: bool = True, base_url: str | None = None,
                    session_token: str | None = None, timeout: float | httpx.Timeout | None = None,
                    max_retries: int = DEFAULT_MAX_RETRIES, http_client: httpx.Client | None = None,
                    default_headers: Mapping[str, str] | None = None) -> WasdiClient:
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
        client = cls(base_url=base_url or config.base_url, session_token=session_token or config.session_id,
                     timeout=timeout, max_retries=max_retries, http_client=http_client,
                     default_headers=default_headers)
        client.config = config
        if login and not client.session_token and config.user and config.password:
            client.auth.login(config.user, config.password)
        return client
