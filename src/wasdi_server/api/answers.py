"""Turning results and domain errors into HTTP answers, in each endpoint's own failure style.

This is the only place that builds failure bodies: resources raise ``DomainError``s and return
plain results.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from pydantic import TypeAdapter

from wasdi_sdk.catalog import Endpoint, FailureKind, ResponseKind
from wasdi_sdk.models import ErrorResponse, PrimitiveResult, WasdiModel

from ..errors import DomainError
from .content_disposition import content_disposition

JSON_TYPE = "application/json"


@dataclass(slots=True)
class Answer:
    """What goes on the wire: status, media type and body (bytes, or a stream of chunks)."""

    status: int
    body: bytes | None = None
    media_type: str = JSON_TYPE
    stream: Iterable[bytes] | IO[bytes] | None = None
    length: int | None = None
    headers: dict[str, str] | None = None


@dataclass
class FileResult:
    """A handler's binary answer: a file on disk or an open stream, with its download name."""

    stream: IO[bytes] | Iterator[bytes]
    media_type: str = "application/octet-stream"
    filename: str | None = None
    length: int | None = None
    inline: bool = False


_LIST_ADAPTERS: dict[type[WasdiModel], TypeAdapter[list[Any]]] = {}


def to_json_bytes(value: Any) -> bytes:
    """JSON with wire names; a list of one model class is serialised in one pass (listings are hot)."""
    if isinstance(value, WasdiModel):  # pydantic-core writes the bytes itself: no dict, no json.dumps
        return value.__pydantic_serializer__.to_json(value, by_alias=True, exclude_none=True)
    if isinstance(value, list) and value and isinstance(value[0], WasdiModel):
        cls = type(value[0])
        if all(type(item) is cls for item in value):
            adapter = _LIST_ADAPTERS.get(cls)
            if adapter is None:
                adapter = _LIST_ADAPTERS.setdefault(cls, TypeAdapter(list[cls]))  # type: ignore[valid-type]
            return adapter.dump_json(value, by_alias=True, exclude_none=True)
    return json.dumps(jsonable(value), separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def jsonable(value: Any) -> Any:
    if isinstance(value, WasdiModel):
        return value.to_wire()
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    return value


def success(ep: Endpoint, result: Any) -> Answer:
    """The 200 answer carrying ``result`` as the endpoint's response kind says."""
    kind = ep.response.kind
    if isinstance(result, Answer):
        return result
    if isinstance(result, FileResult):
        headers = {}
        if result.filename:
            headers["Content-Disposition"] = content_disposition(result.filename, inline=result.inline)
        return Answer(200, media_type=result.media_type, stream=result.stream, length=result.length,
                      headers=headers)
    if kind is ResponseKind.EMPTY and result is None:
        return Answer(200, body=b"", media_type="text/plain")
    if kind in (ResponseKind.TEXT, ResponseKind.HTML) and isinstance(result, str):
        return Answer(200, body=result.encode("utf-8"), media_type=ep.response.media_type + "; charset=utf-8")
    return Answer(200, body=to_json_bytes(result))


def failure(ep: Endpoint, error: DomainError) -> Answer:
    """The answer that signals ``error`` in ``ep``'s failure style."""
    f = ep.failure
    status = error.status
    message = error.message
    kind = f.session_failure if status == 401 and f.session_failure else f.kind
    if kind is FailureKind.ERROR_RESPONSE:
        if status in (204, 304):
            return Answer(status, body=b"")
        return Answer(status, body=to_json_bytes(ErrorResponse(message=message or None)))
    if kind in (FailureKind.PRIMITIVE, FailureKind.PRIMITIVE_WITH_STATUS):
        body = PrimitiveResult(bool_value=False, int_value=status, string_value=message or None)
        http_status = status if kind is FailureKind.PRIMITIVE_WITH_STATUS else 200
        return Answer(http_status, body=b"" if http_status == 304 else to_json_bytes(body))
    if kind is FailureKind.INVALID_USER:
        return Answer(200, body=to_json_bytes({"userId": "", "boolValue": False}))
    if kind is FailureKind.NULL:
        return Answer(200, body=b"null")
    if kind is FailureKind.EMPTY_LIST:
        return Answer(200, body=b"[]")
    if kind is FailureKind.DEFAULT_MODEL:
        return Answer(200, body=to_json_bytes(dict(f.defaults)))
    if kind is FailureKind.TEXT_ERROR:
        return Answer(200, body=b"ERROR", media_type="text/plain; charset=utf-8")
    if kind is FailureKind.MINUS_ONE:
        return Answer(200, body=b"-1")
    if kind is FailureKind.FALSE:
        return Answer(200, body=b"false")
    if kind is FailureKind.RUNNING_ERROR:
        return Answer(200, body=to_json_bytes({**f.defaults, "status": "ERROR", "message": message or None}))
    raise AssertionError(f"unhandled failure kind {kind}")
