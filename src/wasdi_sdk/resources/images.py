"""``client.images``: image upload, retrieval, existence check and deletion; processor logo and gallery (/images)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Unpack, cast, overload

from .._exceptions import NotFoundError
from .._resource import APIResource, RequestOptions
from .._streams import FileSource, Progress, download_to, upload_part
from ..models import PrimitiveResult

# Where the streamed pieces were first defined: the groups' callers of earlier versions import them from here.
__all__ = ["FileSource", "ImagesResource", "Progress", "download_to", "upload_part"]


class ImagesResource(APIResource):
    """/images.  Collections: ``processors``, ``users``, ``organizations``, ``styles``, ``globathy``."""

    def upload(self, file: FileSource, *, collection: str, name: str, folder: str | None = None,
               resize: bool | None = None, thumbnail: bool | None = None, filename: str | None = None,
               on_progress: Progress | None = None, **options: Unpack[RequestOptions]) -> None:
        """Store an image (``jpg``, ``png`` or ``svg``, at most 2 MiB) as ``name`` in a collection.

        ``file`` is a path or an open binary file, streamed.  Its type is the extension of
        ``filename`` (default: the file's own name); an image of the same name with another
        extension is replaced.  ``resize`` and ``thumbnail`` are accepted and have no effect.
        """
        with upload_part(file, filename, on_progress) as part:
            self._call("images.upload", query={"collection": collection, "folder": folder, "name": name,
                                               "resize": resize, "thumbnail": thumbnail},
                       files={"image": part}, **options)

    @overload
    def get(self, *, collection: str, name: str, folder: str | None = None, to: None = None,
            on_progress: Progress | None = None, **options: Unpack[RequestOptions]) -> bytes: ...

    @overload
    def get(self, *, collection: str, name: str, folder: str | None = None, to: str | os.PathLike[str],
            on_progress: Progress | None = None, **options: Unpack[RequestOptions]) -> Path: ...

    def get(self, *, collection: str, name: str, folder: str | None = None, to: str | os.PathLike[str] | None = None,
            on_progress: Progress | None = None, **options: Unpack[RequestOptions]) -> bytes | Path:
        """An image: its bytes, or, with ``to`` (a file or a folder), streamed there (the path is returned).

        ``NoContentError`` when the image is not on disk.
        """
        query = {"collection": collection, "folder": folder, "name": name}
        if to is None:
            return cast(bytes, self._call("images.get", query=query, **options))
        return download_to(self._client, "images.get", query, to, name, on_progress, options)

    def exists(self, *, collection: str, name: str, folder: str | None = None,
               **options: Unpack[RequestOptions]) -> bool:
        """Whether the image is on disk (the service answers 404 when it is not)."""
        try:
            result = self._call("images.exists", query={"collection": collection, "folder": folder, "name": name},
                                **options)
        except NotFoundError:
            return False
        return cast(bool, result) if self._raw else True

    def delete(self, *, collection: str, name: str, folder: str | None = None,
               **options: Unpack[RequestOptions]) -> None:
        """Delete an image (write rights on the collection's owner object needed)."""
        self._call("images.delete", query={"collection": collection, "folder": folder, "name": name}, **options)

    def upload_processor_logo(self, file: FileSource, *, processor_id: str, filename: str | None = None,
                              on_progress: Progress | None = None, **options: Unpack[RequestOptions]) -> None:
        """Set a processor's logo (``logo.<ext>``; the processor's ``logo`` becomes its link)."""
        with upload_part(file, filename, on_progress) as part:
            self._call("images.upload_processor_logo", query={"processorId": processor_id}, files={"image": part},
                       **options)

    def upload_gallery_image(self, file: FileSource, *, processor_id: str, filename: str | None = None,
                             on_progress: Progress | None = None,
                             **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Add an image to a processor's gallery (six at most); ``string_value`` is the image's link."""
        with upload_part(file, filename, on_progress) as part:
            return cast(PrimitiveResult, self._call("images.upload_gallery_image",
                                                    query={"processorId": processor_id}, files={"image": part},
                                                    **options))
