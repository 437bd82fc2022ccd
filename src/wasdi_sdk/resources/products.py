"""``client.products``: products inside workspaces (/product).

Read calls answer null (``EmptyResultError``) or an empty list when the workspace or the product is not
accessible; uploads are streamed from a path or an open binary file, never read whole.
"""

from __future__ import annotations

import builtins
from typing import Any, Unpack, cast

from .._resource import APIResource, RequestOptions
from .._streams import FileSource, Progress, upload_part
from ..models import GeorefProductViewModel, MetadataViewModel, PrimitiveResult, ProductViewModel
from .workspaces import WorkspacesResource

Products = builtins.list[GeorefProductViewModel]


class ProductsResource(APIResource):
    """/product."""

    def add_to_workspace(self, name: str, workspace: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Make a file already in the workspace folder a product (``bool_value`` true, also when it already is)."""
        return cast(PrimitiveResult, self._call("products.add_to_workspace",
                                                query={"name": name, "workspace": workspace}, **options))

    def get(self, name: str, workspace: str, **options: Unpack[RequestOptions]) -> GeorefProductViewModel:
        """One product (by file name) with its bands and ``bbox``.  ``EmptyResultError`` when not found or
        not accessible."""
        return cast(GeorefProductViewModel, self._call("products.get", query={"name": name, "workspace": workspace},
                                                       **options))

    def get_metadata(self, name: str, workspace: str, **options: Unpack[RequestOptions]) -> MetadataViewModel:
        """The metadata tree of a product.  While the server generates it the answer is a model named
        ``Generating Metadata, try later``: ask again.  ``EmptyResultError`` when it cannot be had."""
        return cast(MetadataViewModel, self._call("products.get_metadata",
                                                  query={"name": name, "workspace": workspace}, **options))

    def list(self, workspace: str, **options: Unpack[RequestOptions]) -> Products:
        """Products of a workspace, given by its id or its name, with bbox, style and description.

        An empty list is a valid answer (an empty workspace).  The service answers an unknown workspace with an
        empty list too, so then the SDK looks ``workspace`` up (``client.workspaces.resolve``): a name is read
        as the workspace so named, and neither an id nor a name is a ``NotFoundError`` naming it.
        """
        return cast(Products, self._listing("products.list", workspace, options))

    def list_light(self, workspace: str, **options: Unpack[RequestOptions]) -> Products:
        """Products of a workspace (its id or its name, as for ``list``) with their names and bbox only."""
        return cast(Products, self._listing("products.list_light", workspace, options))

    def list_names(self, workspace: str, **options: Unpack[RequestOptions]) -> builtins.list[str]:
        """File names of the products of a workspace (its id or its name, as for ``list``)."""
        return cast(builtins.list[str], self._listing("products.list_names", workspace, options))

    def _listing(self, name: str, workspace: str, options: RequestOptions) -> Any:
        """The listing ``name`` of ``workspace``; an empty one looks ``workspace`` up as a name (see ``list``)."""
        found = self._call(name, query={"workspace": workspace}, **options)
        if found:
            return found
        workspace_id = WorkspacesResource(self._client).resolve(workspace, **options)
        if workspace_id == workspace:
            return found
        return self._call(name, query={"workspace": workspace_id}, **options)

    def update(self, workspace: str, product: ProductViewModel, **options: Unpack[RequestOptions]) -> None:
        """Change the friendly name, style or description of the product ``product.file_name``.

        Only the fields set on ``product`` are sent; a new style is applied to the published bands.
        """
        self._call("products.update", query={"workspace": workspace}, body=product, **options)

    def upload(self, workspace: str, file: FileSource, *, name: str | None = None, style: str | None = None,
               platform: str | None = None, on_progress: Progress | None = None,
               **options: Unpack[RequestOptions]) -> None:
        """Upload a file (a path or an open binary file, streamed) and queue its INGEST.

        ``name`` is the file name in the workspace (default: the file's own name).  ``on_progress`` is
        called with the number of bytes sent since the previous call.  The INGEST process id is not
        returned by the service; ``wasdi_sdk.transfer.upload_and_ingest`` waits for the product.
        """
        with upload_part(file, name, on_progress) as part:
            self._call("products.upload", query={"workspace": workspace, "name": name or part[0], "style": style,
                                                 "platform": platform}, files={"file": part}, **options)

    def upload_without_ingest(self, workspace: str, file: FileSource, *, name: str | None = None,
                              on_progress: Progress | None = None, **options: Unpack[RequestOptions]) -> None:
        """Store a file in the workspace folder without making it a product (``client.files.ingest`` does)."""
        with upload_part(file, name, on_progress) as part:
            self._call("products.upload_without_ingest", query={"workspace": workspace, "name": name or part[0]},
                       files={"file": part}, **options)

    def delete(self, name: str, workspace: str, *, deletefile: bool | None = None, deletelayer: bool | None = None,
               **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Remove a product; its file (and sidecar files) and its map layers too unless told otherwise."""
        return cast(PrimitiveResult, self._call("products.delete", query={
            "name": name, "workspace": workspace, "deletefile": deletefile, "deletelayer": deletelayer}, **options))

    def delete_many(self, workspace: str, names: builtins.list[str], *, deletefile: bool | None = None,
                    deletelayer: bool | None = None, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Start deleting several products in the background (``string_value``: the DELETE process id)."""
        return cast(PrimitiveResult, self._call("products.delete_many", query={
            "workspace": workspace, "deletefile": deletefile, "deletelayer": deletelayer}, body=names, **options))
