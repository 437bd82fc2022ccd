"""The messages a WASDI server publishes about a workspace, one model per kind of payload.

Every message is a ``RabbitMessageViewModel`` (``messageCode``, ``messageResult`` OK/KO, ``payload``,
``workspaceId``) published on exchange ``amq.topic`` with the workspace id as routing key.  ``parse_message``
gives the model of its kind; a code this SDK does not know, or a payload that is not what its code promises,
comes back as ``UnknownMessage`` with the payload as it was sent.  Not contract models: they travel on the
broker, not over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import Field, ValidationError

from ._base import WasdiModel
from .file_buffer import PublishBandResultViewModel, RabbitMessageViewModel
from .products import GeorefProductViewModel
from .subscriptions import PaymentDetail

OK = "OK"
KO = "KO"
PRODUCT_CODES = frozenset({"DOWNLOAD", "INGEST", "SHARE", "GRAPH", "MOSAIC", "REGRID", "MULTISUBSET"})
"""Codes whose OK payload is the new product."""
TEXT_CODES = frozenset({"INFO", "DELETEPROCESSOR", "ENVIRONMENTUPDATE", "LAUNCHJUPYTERNOTEBOOK", "COPYTOSFTP",
                        "FTPUPLOAD"})
"""Codes whose payload is a text for people (``<br>`` separates its lines)."""


class BrokerAddress(WasdiModel):
    """Where and how to listen to a server's messages (STOMP over WebSocket), as the server says."""

    url: str
    """The WebSocket address (``webstompUrl``)."""
    login: str = ""
    passcode: str = Field(default="", repr=False)
    session_as_passcode: bool = True
    """Send the session token as ``passcode`` (this server's built-in broker); else ``login``/``passcode``."""
    destination_prefix: str = "/exchange/amq.topic/"
    """A workspace's destination is this prefix followed by the workspace id."""


class WorkspaceMessage(RabbitMessageViewModel):
    """A message about a workspace (the base of every kind)."""

    @property
    def ok(self) -> bool:
        """Whether the operation went well (messages without a result, like process updates, count as OK)."""
        return self.message_result != KO

    def text(self) -> str:
        """The payload as one line for people."""
        payload = self.payload
        if isinstance(payload, str):
            return payload.replace("<br>", " - ").replace("<BR>", " - ").replace("\n", " ")
        return "" if payload is None else json.dumps(payload, ensure_ascii=False, separators=(",", ":"))


class ProcessUpdateMessage(WorkspaceMessage):
    """UPDATEPROCESSES: a process changed state or progress; payload ``"<processObjId>;<STATUS>;<progressPerc>"``."""

    payload: str

    def _parts(self) -> list[str]:
        return self.payload.split(";")

    @property
    def process_id(self) -> str:
        return self._parts()[0]

    @property
    def status(self) -> str:
        parts = self._parts()
        return parts[1] if len(parts) > 1 else ""

    @property
    def progress_perc(self) -> int:
        parts = self._parts()
        try:
            return int(float(parts[2])) if len(parts) > 2 else 0
        except ValueError:
            return 0

    def text(self) -> str:
        return f"{self.process_id} {self.status} {self.progress_perc}%"


class ProductMessage(WorkspaceMessage):
    """DOWNLOAD, INGEST, SHARE, GRAPH, MOSAIC, REGRID, MULTISUBSET (OK): the product the operation added."""

    payload: GeorefProductViewModel

    def text(self) -> str:
        return f"added {self.payload.file_name or self.payload.name or ''}".strip()


class PublishBandMessage(WorkspaceMessage):
    """PUBLISHBAND (OK): where the published band is on the map server."""

    payload: PublishBandResultViewModel

    def text(self) -> str:
        return f"band {self.payload.band_name} of {self.payload.product_name} published as {self.payload.layer_id}"


class TextMessage(WorkspaceMessage):
    """INFO, DELETEPROCESSOR, ENVIRONMENTUPDATE, LAUNCHJUPYTERNOTEBOOK, COPYTOSFTP, FTPUPLOAD: a text for people."""

    payload: str | None = None


class FailureMessage(WorkspaceMessage):
    """Any operation's KO: ``payload`` says what went wrong."""

    payload: str | None = None


class DeleteMessage(WorkspaceMessage):
    """DELETE: products were deleted from the workspace (no payload)."""

    def text(self) -> str:
        return "products deleted"


class SubscriptionMessage(WorkspaceMessage):
    """SUBSCRIPTION: a subscription bought from this workspace was paid."""

    payload: PaymentDetail

    def text(self) -> str:
        return f"subscription paid ({self.payload.client_reference_id or ''})"


class UnknownMessage(WorkspaceMessage):
    """A code this SDK does not model, or a payload unlike its code's: everything kept as sent."""


def _kind(code: str | None, result: str | None) -> type[WorkspaceMessage]:
    if result == KO:
        return FailureMessage
    if code == "UPDATEPROCESSES":
        return ProcessUpdateMessage
    if code in PRODUCT_CODES:
        return ProductMessage
    if code == "PUBLISHBAND":
        return PublishBandMessage
    if code in TEXT_CODES:
        return TextMessage
    if code == "DELETE":
        return DeleteMessage
    if code == "SUBSCRIPTION":
        return SubscriptionMessage
    return UnknownMessage


def parse_message(body: bytes | str | Mapping[str, Any]) -> WorkspaceMessage:
    """The model of one message body (JSON bytes or text, or the decoded object).

    ``ValueError`` if the body is not a JSON object; any JSON object gives a model.
    """
    data = json.loads(body) if isinstance(body, bytes | str) else body
    if not isinstance(data, Mapping):
        raise ValueError("a broker message is a JSON object")
    kind = _kind(data.get("messageCode"), data.get("messageResult"))
    try:
        return kind.model_validate(data)
    except ValidationError:
        return UnknownMessage.model_validate(data)


__all__ = [
    "KO",
    "OK",
    "PRODUCT_CODES",
    "TEXT_CODES",
    "BrokerAddress",
    "DeleteMessage",
    "FailureMessage",
    "ProcessUpdateMessage",
    "ProductMessage",
    "PublishBandMessage",
    "SubscriptionMessage",
    "TextMessage",
    "UnknownMessage",
    "WorkspaceMessage",
    "parse_message",
]
