"""What the nodes need of a call to send it to another node, or to ask the other nodes the same.

The HTTP face's parsed call (``api.framework.Call``) has these parts; the nodes ask for them through this
``Protocol`` and never import the face, and a relayed answer comes back as a ``Relayed`` the face writes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import falcon

from wasdi_sdk.catalog import Endpoint


class NodeCall(Protocol):
    """A parsed request, as far as forwarding and merging read it."""

    @property
    def endpoint(self) -> Endpoint:
        """The catalogue's endpoint the request calls."""

    @property
    def request(self) -> falcon.Request:
        """The request as the client sent it (method, path, query, headers, body stream)."""

    @property
    def params(self) -> dict[str, Any]:
        """The query parameters the catalogue declares, parsed."""

    @property
    def extra(self) -> dict[str, list[str]]:
        """The query parameters the catalogue does not declare (raw values)."""

    @property
    def session_id(self) -> str | None:
        """The caller's session, sent on so the other node checks the caller's rights itself."""

    @property
    def raw_body(self) -> bytes | None:
        """The body's bytes, when something read them already."""

    def body_json(self) -> Any:
        """The body as plain JSON (``None`` when it is not JSON), keeping its bytes in ``raw_body``."""


@dataclass(slots=True)
class Relayed:
    """Another node's answer, to give the client as it is: status, media type, and a body or a stream."""

    status: int
    media_type: str
    body: bytes | None = None
    stream: Iterable[bytes] | None = None
    length: int | None = None
    headers: dict[str, str] | None = None
