"""``GET /layers/{layerId}.png``: the map layers the local map server draws (outside the catalogue).

A published band's ``geoserverUrl`` points here.  The caller needs a session (the ``x-session-token``
header, or ``?token=`` since map clients load images by URL) that may read the layer's workspace.
Failures answer ``ErrorResponse {message}`` with 401, 403 or 404.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import falcon

from ..errors import DomainError
from .answers import to_json_bytes
from .framework import SESSION_HEADER

if TYPE_CHECKING:
    from ..services import Services

ROUTE = "/layers/{layer_id}.png"


class LayerImage:
    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response, layer_id: str) -> None:
        token = req.get_header(SESSION_HEADER) or req.get_param("token") or None
        user = self.services.sessions.resolve(token)
        if user is None:
            self._fail(resp, 401, "MSG_ERROR_INVALID_SESSION")
            return
        try:
            path = self.services.products.layer_for(user, layer_id)
            handle = open(path, "rb")  # noqa: SIM115 - falcon streams and closes it
        except DomainError as e:
            self._fail(resp, e.status, e.message)
            return
        except OSError:
            self._fail(resp, 404, "no such layer")
            return
        resp.content_type = "image/png"
        resp.set_header("Cache-Control", "private, max-age=60")
        resp.stream = handle
        resp.content_length = os.fstat(handle.fileno()).st_size

    @staticmethod
    def _fail(resp: falcon.Response, status: int, message: str) -> None:
        resp.status = falcon.code_to_http_status(status)
        resp.content_type = "application/json"
        resp.data = to_json_bytes({"message": message})
