"""Calls that exist only for the nodes of a deployment to call each other (not in the contract, so not in the
catalogue).  Each refuses a caller without the deployment's node secret (compared in constant time), so a
user's session alone never reaches it, and then checks the rights of the user the call acts for again.

- ``GET /nodes/appfiles?processorId=`` (main node): the app's files as a zip, for a compute node that
  installs it at a run of a user who may read the app (``x-session-token``: that user's session).
- ``POST /nodes/userdeleted?userId=`` (compute nodes): a user deleted on the main node; this node removes
  what it keeps of them (``user_cleanup``).  It acts for no user: the node secret alone authorises it.
- ``POST /nodes/messages`` (main node): messages born on a compute node, for the main node's built-in
  broker (``messages/relay.py``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Protocol

import falcon

from ..domains.apps.app_files import ZipStream
from ..messages.relay import MAX_BODY_BYTES, NODE_MESSAGES, messages_of
from .app_install import APP_FILES
from .identity import SECRET_HEADER
from .user_cleanup import USER_DELETED, CleanupParts, forget_user_here

if TYPE_CHECKING:
    from ..domains.accounts.identity import UserService
    from ..domains.accounts.sessions import SessionService
    from ..messages import Messages


class NodeCallParts(CleanupParts, Protocol):
    """What the calls between nodes use: this node, the callers' sessions, the accounts, the messages, and
    what forgetting a user removes."""

    @property
    def sessions(self) -> SessionService:
        """The session of the user a call acts for."""

    @property
    def users(self) -> UserService:
        """Whether a user still exists."""

    @property
    def messages(self) -> Messages:
        """Where a compute node's messages are published."""


def _refuse(resp: falcon.Response, status: int, message: str) -> None:
    resp.status = status
    resp.content_type = "application/json"
    resp.data = json.dumps({"message": message}).encode()


class AppFiles:
    """``GET /nodes/appfiles``: an app's files, for the compute node about to run it."""

    ROUTE = APP_FILES

    def __init__(self, services: NodeCallParts) -> None:
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


class UserDeleted:
    """``POST /nodes/userdeleted``: what a compute node keeps of a user deleted on the main node goes."""

    ROUTE = USER_DELETED

    def __init__(self, services: NodeCallParts) -> None:
        self.services = services

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        services = self.services
        if not services.identity.is_node_caller(req.get_header(SECRET_HEADER)):
            _refuse(resp, 403, "only the nodes of this deployment may call this")
            return
        if services.identity.is_main:
            _refuse(resp, 400, "users are deleted on the main node, which tells the compute nodes")
            return
        user_id = req.get_param("userId") or ""
        if not user_id or len(user_id) > 200:
            _refuse(resp, 400, "userId is required")
            return
        if services.users.users.get(user_id) is not None:
            # Never a live account's files; the main node removes the account record right after telling the
            # nodes, so this is "not yet": a 5xx makes the outbox try again.
            _refuse(resp, 503, "the user still exists; the main node has not finished deleting them")
            return
        removed = forget_user_here(services, user_id)
        resp.content_type = "application/json"
        resp.data = json.dumps(removed).encode()


class NodeMessages:
    """``POST /nodes/messages``: a compute node's messages, published to this main node's broker."""

    ROUTE = NODE_MESSAGES

    def __init__(self, services: NodeCallParts) -> None:
        self.services = services

    def on_post(self, req: falcon.Request, resp: falcon.Response) -> None:
        services = self.services
        if not services.identity.is_node_call(req.get_header):
            _refuse(resp, 403, "only the nodes of this deployment may call this")
            return
        if not services.identity.is_main:
            _refuse(resp, 400, "messages are handed to the main node")
            return
        length = req.content_length or 0
        if length > MAX_BODY_BYTES:
            _refuse(resp, 413, f"at most {MAX_BODY_BYTES} bytes of messages at once")
            return
        try:
            messages = messages_of(req.bounded_stream.read(MAX_BODY_BYTES + 1)[:MAX_BODY_BYTES])
        except ValueError as e:
            _refuse(resp, 400, f"not a list of messages: {e}")
            return
        for message in messages:
            services.messages.send(message.code, message.payload, message.workspace_id, message.result)
        resp.content_type = "application/json"
        resp.data = json.dumps({"published": len(messages)}).encode()


ROUTES = (AppFiles, UserDeleted, NodeMessages)
