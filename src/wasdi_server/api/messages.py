"""``GET /messages/address``: where this server's messages are listened to (outside the contract).

The SDK and the CLI ask it before they listen; WASDI's web client reads the same address from its
``environment.js``.  Needs a session (the ``x-session-token`` header); answers ``BrokerAddress``, or
``ErrorResponse`` 401.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import falcon

from wasdi_sdk.events import ADDRESS_PATH

from ..messages import broker_address
from .answers import to_json_bytes
from .framework import SESSION_HEADER

if TYPE_CHECKING:
    from ..composition import Services

ROUTE = ADDRESS_PATH


class BrokerAddressResource:
    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "application/json"
        resp.cache_control = ["no-store"]
        if self.services.sessions.resolve(req.get_header(SESSION_HEADER) or None) is None:
            resp.status = falcon.HTTP_401
            resp.data = to_json_bytes({"message": "MSG_ERROR_INVALID_SESSION"})
            return
        resp.data = to_json_bytes(broker_address(self.services.settings, req.scheme, req.netloc))
