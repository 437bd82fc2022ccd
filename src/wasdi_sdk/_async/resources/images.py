"""Generated from ``wasdi_sdk.resources.images`` by ``make async``: do not edit.

``client.images``: image upload, retrieval, existence check and deletion; processor logo and gallery (/images)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Unpack, cast, overload

from ..._exceptions import NotFoundError
from ..._resource import RequestOptions
from ..._streams import FileSource, Progress, upload_part
from ...models import PrimitiveResult
from .._resource import AsyncAPIResource
from .._streams import download_to


class AsyncImagesResource(AsyncAPIResource):
    """Async twin of ``ImagesResource``: the same methods, awaited.

    /images.  Collections: ``processors``, ``users``, ``organizations``, ``styles``, ``globathy``."""

    async def upload(
        self,
        file: FileSource,
        *,
        collection: str,
        name: str,
        folder: str | None = None,
        resize: bool | None = None,
        thumbnail: bool | None = None,
        filename: str | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Store an image (``jpg``, ``png`` or ``svg``, at most 2 MiB) as ``name`` in a collection.

        ``file`` is a path or an open binary file, streamed.  Its type is the extension of
        ``filename`` (default: the file's own name); an image of the same name with another
        extension is replaced.  ``resize`` and ``thumbnail`` are accepted and have no effect.
        """
        with upload_part(file, filename, on_progress) as part:
            await self._call(
                "images.upload",
                query={
                    "collection": collection,
                    "folder": folder,
                    "name": name,
                    "resize": resize,
                    "thumbnail": thumbnail,
                },
                files={"image": part},
                **options,
            )

    @overload
    async def get(
        self,
        *,
        collection: str,
        name: str,
        folder: str | None = None,
        to: None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes: ...

    @overload
    async def get(
        self,
        *,
        collection: str,
        name: str,
        folder: str | None = None,
        to: str | os.PathLike[str],
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> Path: ...

    async def get(
        self,
        *,
        collection: str,
        name: str,
        folder: str | None = None,
        to: str | os.PathLike[str] | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes | Path:
        """An image: its bytes, or, with ``to`` (a file or a folder), streamed there (the path is returned).

        ``NoContentError`` when the image is not on disk.
        """
        query = {"collection": collection, "folder": folder, "name": name}
        if to is None:
            return cast(bytes, await self._call("images.get", query=query, **options))
        return await download_to(self._client, "images.get", query, to, name, on_progress, options)

    async def exists(
        self, *, collection: str, name: str, folder: str | None = None, **options: Unpack[RequestOptions]
    ) -> bool:
        """Whether the image is on disk (the service answers 404 when it is not)."""
        try:
            result = await self._call(
                "images.exists", query={"collection": collection, "folder": folder, "name": name}, **options
            )
        except NotFoundError:
            return False
        return cast(bool, result) if self._raw else True

    async def delete(
        self, *, collection: str, name: str, folder: str | None = None, **options: Unpack[RequestOptions]
    ) -> None:
        """Delete an image (write rights on the collection's owner object needed)."""
        await self._call("images.delete", query={"collection": collection, "folder": folder, "name": name}, **options)

    async def upload_processor_logo(
        self,
        file: FileSource,
        *,
        processor_id: str,
        filename: str | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Set a processor's logo (``logo.<ext>``; the processor's ``logo`` becomes its link)."""
        with upload_part(file, filename, on_progress) as part:
            await self._call(
                "images.upload_processor_logo", query={"processorId": processor_id}, files={"image": part}, **options
            )

    async def upload_gallery_image(
        self,
        file: FileSource,
        *,
        processor_id: str,
        filename: str | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> PrimitiveResult:
        """Add an image to a processor's gallery (six at most); ``string_value`` is the image's link."""
        with upload_part(file, filename, on_progress) as part:
            return cast(
                PrimitiveResult,
                await self._call(
                    "images.upload_gallery_image", query={"processorId": processor_id}, files={"image": part}, **options
                ),
            )
