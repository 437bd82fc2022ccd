"""The one request-body parser: size and nesting limits (JSON through ``json_reader``, the reader of every
JSON text the server reads), then the endpoint's declared body kind.

Bodies are parsed only when a handler first reads ``call.body``, so the session check and the
handler's own permission checks come first: a caller without the right gets its 401/403, not a
complaint about a body it should never have been able to send.
"""

from __future__ import annotations

from typing import Any

import falcon
import pydantic
from falcon import uri

from wasdi_sdk.catalog import BodyKind, Endpoint
from wasdi_sdk.models import MODELS

from ..errors import BadRequest
from ..json_reader import JsonReader

NUL_MESSAGE = "text cannot contain NUL bytes"


def has_nul(value: Any) -> bool:
    """Whether ``value`` (text, or JSON made of dicts, lists and text) holds a NUL character anywhere, keys
    included: no store keeps such text (PostgreSQL's text cannot hold it), so requests carrying it are
    refused before any store sees them."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


def refuse_nul(value: Any) -> Any:
    """``value`` unchanged, or 400 when it holds a NUL character (``has_nul``)."""
    if has_nul(value):
        raise BadRequest(NUL_MESSAGE)
    return value


def read_limited(req: falcon.Request, limit: int) -> bytes:
    length = req.content_length
    if length is not None and length > limit:
        raise BadRequest(f"the body is larger than {limit} bytes")
    data = req.bounded_stream.read(limit + 1)
    if len(data) > limit:
        raise BadRequest(f"the body is larger than {limit} bytes")
    return bytes(data)


def parse_multipart_fields(req: falcon.Request, limit: int) -> dict[str, str]:
    """The fields of a small multipart form (browsers send forms this way too), within ``limit`` bytes."""
    length = req.content_length
    if length is not None and length > limit:
        raise BadRequest(f"the body is larger than {limit} bytes")
    fields: dict[str, str] = {}
    try:
        for part in req.get_media():
            data = part.stream.read(limit + 1)
            if len(data) > limit:
                raise BadRequest(f"the field {part.name} is larger than {limit} bytes")
            fields[str(part.name)] = data.decode("utf-8", "replace")
    except falcon.MediaMalformedError as e:
        raise BadRequest("malformed multipart body") from e
    return fields


def parse_body(ep: Endpoint, req: falcon.Request, limit: int, max_depth: int, raw: bytes | None = None) -> Any:
    """The body of ``req`` (or ``raw``, when it was read already) as ``ep`` declares it (a model, a list, text
    or form fields), or ``None``; 400 when any of its text (JSON keys included) holds a NUL character."""
    kind = ep.body.kind
    if kind is BodyKind.NONE or kind is BodyKind.MULTIPART:
        return None
    if kind is BodyKind.FORM and (req.content_type or "").startswith("multipart/form-data"):
        return refuse_nul(parse_multipart_fields(req, limit))
    if raw is None:
        raw = read_limited(req, limit)
    if kind is BodyKind.TEXT:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise BadRequest("the body is not UTF-8 text") from e
        if not text.strip() and ep.body.required:
            raise BadRequest("the body is empty")
        return refuse_nul(text)
    if kind is BodyKind.FORM:
        return refuse_nul(uri.parse_query_string(raw.decode("utf-8", "replace"), keep_blank=True, csv=False))
    if not raw.strip():
        if ep.body.required:
            raise BadRequest("the body is empty")
        return None
    data = refuse_nul(JsonReader(limit, max_depth).read(raw))
    if kind is BodyKind.JSON_LIST:
        if not isinstance(data, list):
            raise BadRequest("the body must be a JSON array")
        return data
    if data is None:
        if ep.body.required:
            raise BadRequest("the body is empty")
        return None
    if not isinstance(data, dict):
        raise BadRequest("the body must be a JSON object")
    model_cls = MODELS[ep.body.model or ""]
    try:
        return model_cls.model_validate(data)
    except RecursionError as e:
        raise BadRequest("the body nests too deeply") from e
    except pydantic.ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise BadRequest(f"invalid body: {where}: {first.get('msg', 'invalid value')}") from e
