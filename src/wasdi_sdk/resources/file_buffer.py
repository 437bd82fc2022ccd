"""``client.file_buffer``: imports into a workspace, band publishing, copies between workspaces (/filebuffer)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from .._resource import APIResource, RequestOptions
from ..models import ImageImportViewModel, RabbitMessageViewModel, StringResult, StyleViewModel


class FileBufferResource(APIResource):
    """/filebuffer."""

    def share(self, origin_workspace_id: str, destination_workspace_id: str, product_name: str, *,
              parent: str | None = None, **options: Unpack[RequestOptions]) -> StringResult:
        """Copy a product to another workspace: ``string_value`` is the SHARE process id.

        When the destination already has a product of that name nothing is copied and ``string_value`` is
        ``"PRODUCT_ALREADY_PRESENT"`` (``bool_value=True``; older servers sent ``False``; no exception).
        """
        return cast(StringResult, self._call("file_buffer.share", query={
            "originWorkspaceId": origin_workspace_id, "destinationWorkspaceId": destination_workspace_id,
            "productName": product_name, "parent": parent}, **options))

    def import_product(self, *, file_url: str, workspace: str, name: str | None = None,
                       provider: str | None = None, bbox: str | None = None, parent: str | None = None,
                       platform: str | None = None, volume_name: str | None = None, volume_path: str | None = None,
                       **options: Unpack[RequestOptions]) -> StringResult:
        """Import a file (an http(s) or file:// URL, e.g. a search result's ``link``) into a workspace.

        ``string_value`` is the DOWNLOAD process id, or ``DONE`` when the product is already there.
        """
        body = ImageImportViewModel(file_url=file_url, workspace=workspace, name=name, provider=provider, bbox=bbox,
                                    parent=parent, platform=platform, volume_name=volume_name,
                                    volume_path=volume_path)
        return cast(StringResult, self._call("file_buffer.import_product", body=body, **options))

    def import_product_by_query(self, workspace: str, *, file_url: str | None = None, name: str | None = None,
                                provider: str | None = None, bbox: str | None = None, parent: str | None = None,
                                platform: str | None = None, **options: Unpack[RequestOptions]) -> StringResult:
        """The deprecated GET form of ``import_product`` (same answers)."""
        return cast(StringResult, self._call("file_buffer.import_product_by_query", query={
            "fileUrl": file_url, "name": name, "provider": provider, "bbox": bbox, "parent": parent,
            "platform": platform, "workspace": workspace}, **options))

    def publish_band(self, file_url: str, workspace: str, band: str, *, style: str | None = None,
                     parent: str | None = None, **options: Unpack[RequestOptions]) -> RabbitMessageViewModel:
        """Publish a band of the product ``file_url`` (its file name) on the map server.

        ``message_code`` is ``PUBLISHBAND`` with the PublishBandResultViewModel fields in ``payload`` when
        the band is published, or ``WAITFORRABBIT`` with the PUBLISHBAND process id while it is being
        drawn (ask again when it is DONE).  ``EmptyResultError`` when the product or band is unknown or not
        accessible.
        """
        return cast(RabbitMessageViewModel, self._call("file_buffer.publish_band", query={
            "fileUrl": file_url, "workspace": workspace, "band": band, "style": style, "parent": parent}, **options))

    def styles(self, **options: Unpack[RequestOptions]) -> builtins.list[StyleViewModel]:
        """The styles the user may apply to a band: own, public and shared (an empty list is a valid answer)."""
        return cast(builtins.list[StyleViewModel], self._call("file_buffer.styles", **options))
