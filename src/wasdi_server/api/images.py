"""/images: image upload, retrieval, existence check and deletion; processor logo and gallery.

Also holds ``receive_file``, the streamed reader of a multipart upload that /styles uses too.
"""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import falcon
from falcon.media.multipart import MultipartForm

from wasdi_sdk.models import PrimitiveResult

from ..domains.products.images import MAX_IMAGE_BYTES, image_extension
from ..errors import BadRequest
from .answers import Answer
from .content_disposition import content_disposition
from .framework import Call, handles
from .multipart_stream import SpooledBody

CHUNK = 64 * 1024
MULTIPART_SLACK = 64 * 1024
"""Room for the multipart framing and any small fields around the file part."""


@dataclass
class Received:
    """A file part streamed to a temporary file (removed when the ``with`` block ends unless moved)."""

    path: Path
    filename: str
    size: int


@contextmanager
def receive_file(call: Call, field: str, limit: int, staging: Path,
                 accept: Callable[[str], object] | None = None) -> Iterator[Received]:
    """Stream the multipart file part ``field`` to a temporary file in ``staging``.

    At most ``limit`` bytes: past it the copy stops and the call is a 400 (the temporary file is
    removed).  ``accept`` sees the part's file name before any byte is copied (e.g. to check its
    extension).  Only one chunk is ever held in memory.  When the server already parsed the body while
    it arrived (``serving.py``: a ``SpooledBody`` with its parts), the part's file is moved into
    ``staging`` (a rename on the same disk) instead of being read and written again.
    """
    request = call.request
    if not (request.content_type or "").lower().startswith("multipart/form-data"):
        raise BadRequest(f"expected a multipart/form-data body with a file field {field!r}")
    if request.content_length is None:
        raise BadRequest("a multipart upload needs a Content-Length")
    if request.content_length > limit + MULTIPART_SLACK:
        raise BadRequest(f"the file is larger than {limit} bytes")
    staging.mkdir(parents=True, exist_ok=True)
    temp: Path | None = None
    try:
        body = request.env.get("wsgi.input")
        if isinstance(body, SpooledBody) and body.parts is not None:
            temp, filename, size = _take_spooled_part(body, field, limit, staging, accept)
        else:
            temp, filename, size = _copy_part(request, field, limit, staging, accept)
        yield Received(temp, filename, size)
    finally:
        if temp is not None:
            temp.unlink(missing_ok=True)


def _take_spooled_part(body: SpooledBody, field: str, limit: int, staging: Path,
                       accept: Callable[[str], object] | None) -> tuple[Path, str, int]:
    part = body.part(field)
    if part is None:
        raise BadRequest(f"the form has no file field {field!r}")
    filename = part.filename or ""
    if accept is not None:
        accept(filename)
    if part.size > limit:
        raise BadRequest(f"the file is larger than {limit} bytes")
    temp = staging / f".upload-{uuid.uuid4().hex}"
    part.move_to(temp)
    return temp, filename, part.size


def _copy_part(request: falcon.Request, field: str, limit: int, staging: Path,
               accept: Callable[[str], object] | None) -> tuple[Path, str, int]:
    temp: Path | None = None
    try:
        form = request.get_media()
        if not isinstance(form, MultipartForm):
            raise BadRequest("the body is not a multipart form")
        parts = iter(form)
        for part in parts:
            if part.name != field:
                continue
            filename = part.filename or ""
            if accept is not None:
                accept(filename)
            fd, name = tempfile.mkstemp(dir=staging, prefix=".upload-")
            temp = Path(name)
            size = 0
            with os.fdopen(fd, "wb") as out:
                while chunk := part.stream.read(CHUNK):
                    size += len(chunk)
                    if size > limit:
                        raise BadRequest(f"the file is larger than {limit} bytes")
                    out.write(chunk)
            for _ in parts:  # read to the closing delimiter: a body cut short is refused, not stored
                pass
            return temp, filename, size
        raise BadRequest(f"the form has no file field {field!r}")
    except BaseException as e:
        if temp is not None:
            temp.unlink(missing_ok=True)
        if isinstance(e, falcon.HTTPError):
            raise BadRequest(f"the multipart body cannot be read: {e.title}") from e
        raise


def _check_image_name(filename: str) -> None:
    image_extension(filename)


@handles("images.upload")
def upload_image(call: Call) -> None:
    p = call.params
    images = call.services.images
    place = images.writable(call.caller, p["collection"], p["folder"], p["name"])
    with receive_file(call, "image", MAX_IMAGE_BYTES, images.staging, _check_image_name) as received:
        images.store(place, received.path, received.filename)


@handles("images.get")
def get_image(call: Call) -> Answer:
    p = call.params
    image = call.services.images.open(call.caller, p["collection"], p["folder"], p["name"])
    headers = {"Content-Disposition": content_disposition(image.name, inline=True), "X-Content-Type-Options": "nosniff"}
    if image.media_type == "image/svg+xml":
        headers["Content-Security-Policy"] = "sandbox; default-src 'none'; style-src 'unsafe-inline'"
    return Answer(200, media_type=image.media_type, stream=image.stream, length=image.size, headers=headers)


@handles("images.exists")
def image_exists(call: Call) -> None:
    p = call.params
    call.services.images.exists(call.caller, p["collection"], p["folder"], p["name"])


@handles("images.delete")
def delete_image(call: Call) -> None:
    p = call.params
    call.services.images.delete(call.caller, p["collection"], p["folder"], p["name"])


@handles("images.upload_processor_logo")
def upload_processor_logo(call: Call) -> None:
    images = call.services.images
    processor = images.processor(call.caller, call.params["processorId"])
    with receive_file(call, "image", MAX_IMAGE_BYTES, images.staging, _check_image_name) as received:
        images.store_logo(processor, received.path, received.filename, call.base_url)


@handles("images.upload_gallery_image")
def upload_gallery_image(call: Call) -> PrimitiveResult:
    images = call.services.images
    processor = images.processor(call.caller, call.params["processorId"])
    if images.free_slot(str(processor["name"])) is None:
        raise BadRequest("the gallery is full")
    with receive_file(call, "image", MAX_IMAGE_BYTES, images.staging, _check_image_name) as received:
        link = images.store_gallery_image(processor, received.path, received.filename, call.base_url)
    return PrimitiveResult(bool_value=True, string_value=link)
