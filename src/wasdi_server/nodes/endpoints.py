"""Calls that exist only for the nodes of a deployment to call each other (not in the contract, so not in the
catalogue).  Each refuses a caller without the deployment's node secret (compared in constant time), so a
user's session alone never reaches it, and then checks the rights of the user the call acts for again.

- ``GET /nodes/appfiles?processorId=`` (main node): the app's files as a zip, for a compute node that
  installs it at a run of a user who may read the app (``x-session-token``: that user's session).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import falcon

from ..services.app_files import ZipStream
from .app_install import APP_FILES
from .identity import SECRET_HEADER

if TYPE_CHECKING:
    from ..composition import Services


def _refuse(resp: falcon.Response, status: int, message: str) -> None:
    resp.status = status
    resp.content_type = "application/json"
    resp.data = json.dumps({"message": message}).encode()


class AppFiles:
    """``GET /nodes/appfiles``: an app's files, for the compute node about to run it."""

    ROUTE = APP_FILES

    def __init__(self, services: Services) -> None:
        self.services = services

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        services = self.services
        if not services.identity.is_node_caller(req.get_header(SECRET_HEADER)):
            _refuse(resp, 403, "only the nodes of this deployment may call this")
            return
        if not services.identity.is_main:
            _refuse(resp, 400, "apps are installed from the main node")
            return
        user = services.sessions.resolve(req.get_header("x-session-token"))
        if user is None:
            _refuse(resp, 401, "MSG_ERROR_INVALID_SESSION")
            return
        doc = services.apps.records.get(req.get_param("processorId") or "")
        if doc is None:
            _refuse(resp, 404, "no such app")
            return
        if not services.apps.records.can_read(user, doc):
            _refuse(resp, 403, "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR")
            return
        folder = services.apps.layout(doc).folder
        if not folder.is_dir():
            _refuse(resp, 404, "the app has no files on the main node")
            return
        resp.content_type = "application/zip"
        resp.stream = ZipStream(folder)


ROUTES = (AppFiles,)
