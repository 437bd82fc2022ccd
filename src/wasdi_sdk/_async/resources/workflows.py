"""Generated from ``wasdi_sdk.resources.workflows`` by ``make async``: do not edit.

``client.workflows``: SNAP graph workflows, their sharing and their runs (/workflows)."""

from __future__ import annotations

import builtins
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Unpack, cast, overload

from ..._lookup import find_one
from ..._resource import RequestOptions
from ..._streams import FileSource, Progress, upload_part
from ...models import PrimitiveResult, SnapWorkflowViewModel, StringResult, WorkflowSharingViewModel
from .._resource import AsyncAPIResource
from .._streams import download_to


class AsyncWorkflowsResource(AsyncAPIResource):
    """Async twin of ``WorkflowsResource``: the same methods, awaited.

    /workflows.  A workflow is a SNAP graph (XML); its Read and Write nodes are its inputs and outputs."""

    async def upload(
        self,
        file: FileSource,
        *,
        name: str,
        workspace: str | None = None,
        description: str | None = None,
        public: bool | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Create a workflow from a SNAP graph file (a path or an open binary file, streamed).

        The server detects the Read and Write nodes.  A file that is not a SNAP graph, or a name the
        caller already uses, is a ``BadRequestError``.  The answer is empty: find the new workflow with
        ``get_by_name``.
        """
        with upload_part(file, None, on_progress) as part:
            await self._call(
                "workflows.upload",
                query={"name": name, "workspace": workspace, "description": description, "public": public},
                files={"file": part},
                **options,
            )

    async def update_file(
        self,
        file: FileSource,
        *,
        workflowid: str,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Replace a workflow's graph (its nodes are detected again).

        ``NotModifiedError`` when the new file is identical to the current one.
        """
        with upload_part(file, None, on_progress) as part:
            await self._call("workflows.update_file", query={"workflowid": workflowid}, files={"file": part}, **options)

    async def update_xml(self, *, workflow_id: str, xml: str, **options: Unpack[RequestOptions]) -> None:
        """Replace a workflow's graph with the XML text ``xml``; ``NotModifiedError`` when it is the same."""
        options["extra_headers"] = {"Content-Type": "application/xml", **(options.get("extra_headers") or {})}
        await self._call("workflows.update_xml", query={"workflowId": workflow_id}, body=xml, **options)

    async def get_xml(self, workflow_id: str, **options: Unpack[RequestOptions]) -> str:
        """The graph of a workflow, as XML text."""
        return cast(str, await self._call("workflows.get_xml", query={"workflowId": workflow_id}, **options))

    async def update_params(
        self,
        workflowid: str,
        *,
        name: str | None = None,
        description: str | None = None,
        public: bool | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Change a workflow's name, description and/or visibility (what is left out stays)."""
        await self._call(
            "workflows.update_params",
            query={"workflowid": workflowid, "name": name, "description": description, "public": public},
            **options,
        )

    async def find(self, name: str, **options: Unpack[RequestOptions]) -> SnapWorkflowViewModel:
        """The workflow named ``name`` among those the user sees (``NotFoundError`` naming it when there is
        none)."""
        listed = await self.list(**options)
        return find_one(
            listed,
            name,
            name_of=lambda w: w.name,
            id_of=lambda w: w.workflow_id,
            noun="workflow",
            call=f"client.workflows.find({name!r})",
        )

    async def list(self, **options: Unpack[RequestOptions]) -> builtins.list[SnapWorkflowViewModel]:
        """Workflows the user owns, that are public, or that are shared with them.

        An empty list is a valid answer; ``EmptyResultError`` when the server answers null (no session).
        """
        return cast(builtins.list[SnapWorkflowViewModel], await self._call("workflows.list", **options))

    async def get_by_name(self, name: str, **options: Unpack[RequestOptions]) -> SnapWorkflowViewModel:
        """The workflow called ``name`` (ignoring case) the caller may read: their own first."""
        return cast(SnapWorkflowViewModel, await self._call("workflows.get_by_name", query={"name": name}, **options))

    async def delete(self, workflow_id: str, **options: Unpack[RequestOptions]) -> None:
        """Delete a workflow (its owner or an admin), or drop one's own sharing of it."""
        await self._call("workflows.delete", query={"workflowId": workflow_id}, **options)

    async def share_add(
        self, *, workflow_id: str, user_id: str, rights: str | None = None, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Share a workflow; ``rights`` is ``read`` (default) or ``write``.

        Sharing twice is an error (``BadRequestError`` "Already shared").
        """
        return cast(
            PrimitiveResult,
            await self._call(
                "workflows.share_add", query={"workflowId": workflow_id, "userId": user_id, "rights": rights}, **options
            ),
        )

    async def share_delete(
        self, *, workflow_id: str, user_id: str, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Remove a user's sharing (the user themself, the owner or an admin)."""
        return cast(
            PrimitiveResult,
            await self._call("workflows.share_delete", query={"workflowId": workflow_id, "userId": user_id}, **options),
        )

    async def share_list(
        self, workflow_id: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[WorkflowSharingViewModel]:
        """Sharings of a workflow (an empty list also when it is unknown or not accessible)."""
        return cast(
            builtins.list[WorkflowSharingViewModel],
            await self._call("workflows.share_list", query={"workflowId": workflow_id}, **options),
        )

    async def run(
        self,
        *,
        workspace: str,
        workflow_id: str,
        input_file_names: Sequence[str],
        input_node_names: Sequence[str] | None = None,
        output_file_names: Sequence[str] | None = None,
        output_node_names: Sequence[str] | None = None,
        template_params: Mapping[str, Any] | None = None,
        parent: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> StringResult:
        """Run a workflow on files of ``workspace``; ``string_value`` is the GRAPH process id.

        Input files pair with ``input_node_names`` in order (default: the workflow's Read nodes); output
        names default to ``<first input>_<workflow name>``.  ``template_params`` replace text in the graph.
        Refusals raise by meaning (``BadRequestError``, ``AuthenticationError`` over the storage quota,
        ``PermissionDeniedError``).
        """
        body = SnapWorkflowViewModel(
            workflow_id=workflow_id,
            input_file_names=list(input_file_names),
            input_node_names=list(input_node_names) if input_node_names else None,
            output_file_names=list(output_file_names) if output_file_names else None,
            output_node_names=list(output_node_names) if output_node_names else None,
            template_params=dict(template_params) if template_params else None,
        )
        return cast(
            StringResult,
            await self._call("workflows.run", query={"workspace": workspace, "parent": parent}, body=body, **options),
        )

    @overload
    async def download(
        self,
        workflow_id: str,
        *,
        to: None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes: ...

    @overload
    async def download(
        self,
        workflow_id: str,
        *,
        to: str | os.PathLike[str],
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> Path: ...

    async def download(
        self,
        workflow_id: str,
        *,
        to: str | os.PathLike[str] | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes | Path:
        """The graph file: its bytes, or streamed to ``to`` (a file, or a folder: ``<name>.xml`` in it).

        ``NoContentError`` when the workflow or its file does not exist.
        """
        query = {"workflowId": workflow_id}
        if to is None:
            return cast(bytes, await self._call("workflows.download", query=query, **options))
        return await download_to(
            self._client, "workflows.download", query, to, f"{workflow_id}.xml", on_progress, options
        )
