"""``client.console``: the caller's notebook (JupyterLab) on a workspace (/console, the web client's calls)."""

from __future__ import annotations

from typing import Unpack, cast

from .._resource import APIResource, RequestOptions
from ..models import PrimitiveResult


class ConsoleResource(APIResource):
    """/console: a JupyterLab of the caller on a workspace, with the official library set up for it."""

    def ready(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Whether the caller's notebook on the workspace is up: ``bool_value``, with its address (under the
        server's own, ``<server>/notebook/<workspaceId>/lab?token=…``) in ``string_value``; when it is not, a
        sentence saying why."""
        return cast(PrimitiveResult, self._call("console.ready", query={"workspaceId": workspace_id}, **options))

    def create(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Start (or find) the caller's notebook on the workspace: ``bool_value`` true, and in ``string_value``
        its address once it is up, else a sentence (it is starting: ask ``ready`` until it is).  A server that
        cannot run notebooks refuses with a ``ServerError`` of status 501 saying what to install."""
        return cast(PrimitiveResult, self._call("console.create", query={"workspaceId": workspace_id}, **options))

    def terminate(self, workspace_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Stop the caller's notebook on the workspace (its kernels end with it; the files it wrote stay):
        ``bool_value`` true, with a sentence in ``string_value`` saying whether one was running."""
        return cast(PrimitiveResult, self._call("console.terminate", query={"workspaceId": workspace_id},
                                                **options))
