"""The map layers the local map server draws, outside the catalogue (the contract has no map calls).

- ``GET /wms``: the OGC WMS of the published layers (``domains/products/maps.py``); a published band's
  ``geoserverUrl`` points here.  Failures answer a ServiceExceptionReport (400; 401 without a session),
  never an image and never a 500.
- ``GET /layers/{layerId}.png``: a layer's whole-extent preview image.  Failures answer
  ``ErrorResponse {message}`` with 401, 403 or 404.

Both need a session that may read the layer's workspace: the ``x-session-token`` header, ``?token=`` (map
clients such as QGIS and OWSLib load images by URL), or the session cookie a browser got at login on this
server (WASDI's web client: its map asks for tiles with no header; ``session_cookie.py``).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING
from urllib.parse import quote

import falcon

from ..errors import DomainError
from ..providers.wms import protocol
from ..providers.wms.protocol import ServiceException
from . import session_cookie
from .answers import to_json_bytes
from .framework import LEGACY_BASE_PATH, SESSION_HEADER
from .host_header import canonical_prefix

if TYPE_CHECKING:
    from ..composition import Services

ROUTE = "/layers/{layer_id}.png"
WMS_ROUTE = "/wms"
log = logging.getLogger("wasdi_server")


class LayerImage:
    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response, layer_id: str) -> None:
        token = req.get_header(SESSION_HEADER) or req.get_param("token") or session_cookie.token_of(req)
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


class WebMapService:
    def __init__(self, services: Services) -> None:
        self.services = services

    def service_url(self, req: falcon.Request, token_in_query: str | None) -> str:
        """Where clients send the next requests; a token the caller put in the URL stays in it (map clients
        such as QGIS reuse this address and have no other way to send it)."""
        base = self.services.settings.public_url
        if not base:
            legacy = req.path.startswith(LEGACY_BASE_PATH + "/")
            base = canonical_prefix(req) + (LEGACY_BASE_PATH if legacy else "")
        url = base.rstrip("/") + WMS_ROUTE + "?"
        return url + (f"token={quote(token_in_query, safe='')}&" if token_in_query else "")

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        params = protocol.lower_keys(req.params)
        asked = params.get("version") or params.get("wmtver") or ""
        version = protocol.negotiate(asked) if asked else "1.3.0"
        if (params.get("request") or "").lower() != "getcapabilities":
            version = asked if asked in protocol.VERSIONS else "1.1.1"
        try:
            header_token = req.get_header(SESSION_HEADER) or None
            query_token = params.get("token") or None
            user = self.services.sessions.resolve(header_token or query_token or session_cookie.token_of(req))
            if user is None:
                raise ServiceException("a valid session is required: send the x-session-token header or the "
                                       "token query parameter, or log in on this server's web client", status=401)
            answer = self.services.maps.handle(user, params, self.service_url(req, None if header_token
                                                                              else query_token))
        except ServiceException as e:
            self._fail(resp, e, version)
            return
        except Exception:  # a broken raster must not become a 500 or a traceback in a map client
            log.exception("WMS request failed: %s", {k: v for k, v in params.items() if k != "token"})
            self._fail(resp, ServiceException("the map could not be drawn", "NoApplicableCode"), version)
            return
        resp.content_type = answer.content_type
        resp.data = answer.body
        resp.set_header("Cache-Control", "private, max-age=300" if answer.cacheable else "no-store")

    @staticmethod
    def _fail(resp: falcon.Response, error: ServiceException, version: str) -> None:
        body, content_type = protocol.exception_report(error, version)
        resp.status = falcon.code_to_http_status(error.status)
        resp.content_type = content_type
        resp.data = body
        resp.set_header("Cache-Control", "no-store")
        if error.status == 503:  # the drawing processes are busy: a well-behaved client waits a little
            resp.set_header("Retry-After", "1")
