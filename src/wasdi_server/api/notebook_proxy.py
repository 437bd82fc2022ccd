"""``/notebook/<workspaceId>/…``: a notebook's lab reached through the server's own address.

Each lab listens only on a Unix socket inside its box (``consoles/lab.py``); this is the one way to it from a
browser.  Every request is checked here before a byte reaches a lab, and answered with an ``ErrorResponse``
when refused:

- the lab's token (``?token=`` in the address ``/console/create`` answers, ``Authorization: token …``, or the
  ``wasdi_lab`` cookie this proxy sets for the lab's path after an address with the token) opens that lab,
  as long as its user may still read the workspace;
- else the caller's WASDI session (the ``x-session-token`` header, or the ``wasdi_session`` cookie of a
  browser logged in to the web client on this server) opens the caller's own lab on the workspace, for the
  workspace's owner and those it is shared with;
- nothing, or anything else: 401; a stranger: 403; no lab running for that caller: 404.

A request that sends a cookie as its credential with an ``Origin`` other than the host it reached is refused
(the cookies are SameSite=Strict too): a page of another site can make no change in a lab.  HTTP requests are
carried streamed (``consoles/proxy.py``).  A WebSocket handshake (a kernel's channels) is checked the same
way, then its connection is taken out of waitress (``serving.TAKE_CONNECTION``) and its bytes flow between
the browser and the lab on a thread of its own until either ends (the API's worker thread is freed at once),
so WebSockets need no listener of their own and reach the lab at the same address as its pages.  A WSGI
server that cannot hand a connection over answers such a handshake 501.
"""

from __future__ import annotations

import contextlib
import logging
import re
import socket
from collections.abc import Callable, Iterable, Iterator
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, quote, urlencode
from urllib.parse import urlsplit as _urlsplit

from ..consoles.lab import LAB_PATH
from ..consoles.proxy import (
    LAB_COOKIE,
    SESSION_HEADER,
    LabProxy,
    LabUnreachable,
    TooManyWebSockets,
    lab_headers,
    split_cookies,
)
from ..domains.accounts.sessions import SESSION_COOKIE
from ..errors import DomainError
from ..serving import TAKE_CONNECTION
from .answers import to_json_bytes
from .host_header import split_host

if TYPE_CHECKING:
    from ..composition import Services
    from ..consoles.lab import Lab

log = logging.getLogger("wasdi_server.notebooks")
PREFIX = LAB_PATH.split("{", 1)[0]
"""``/notebook/``: every path below it is a lab's."""
_PATH = re.compile(r"/notebook/(?P<workspace_id>[A-Za-z0-9_-]{1,64})(?P<rest>/.*)?\Z", re.DOTALL)
SESSION_ENV = "HTTP_" + SESSION_HEADER.upper().replace("-", "_")
StartResponse = Callable[[str, list[tuple[str, str]]], Any]


class Refused(Exception):
    """A request that must not reach a lab: its status and the sentence of its ``ErrorResponse``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class NotebookProxy:
    """The WSGI handler of ``/notebook/``."""

    def __init__(self, services: Services, proxy: LabProxy | None = None) -> None:
        self.services = services
        self.proxy = proxy or LabProxy()

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        try:
            lab, via_address = self._lab_of(environ)
        except Refused as e:
            return _refuse(start_response, e.status, e.message)
        target = _target(environ)
        headers = _headers(environ)
        host = environ.get("HTTP_HOST", "")
        upgrade = environ.get("HTTP_UPGRADE", "").lower() == "websocket"
        if upgrade:
            return self._websocket(environ, start_response, lab, target, lab_headers(lab, headers, host))
        try:
            answer = self.proxy.request(lab, environ["REQUEST_METHOD"], target, lab_headers(lab, headers, host),
                                        _body(environ), _length(environ))
        except LabUnreachable as e:
            log.info("the notebook of %s on %s did not answer: %s", lab.plan.user_id, lab.plan.workspace_id, e)
            return _refuse(start_response, 502, "The notebook does not answer: it may be stopping; ask for it again.")
        sent = list(answer.headers)
        if via_address:
            secure = environ.get("wsgi.url_scheme") == "https"
            sent.append(("Set-Cookie", f"{LAB_COOKIE}={lab.token}; Path={lab.path}; HttpOnly; SameSite=Strict"
                         + ("; Secure" if secure else "")))
        start_response(f"{answer.status} {answer.reason or _reason(answer.status)}", sent)
        return answer.body

    # -- who asks -----------------------------------------------------------------------------------------
    def _lab_of(self, environ: dict[str, Any]) -> tuple[Lab, bool]:
        """The lab the request may reach, and whether its token came in the address."""
        found = _PATH.match(environ.get("PATH_INFO", ""))
        if found is None:
            raise Refused(404, "No notebook at this address.")
        if split_host(environ.get("HTTP_HOST", "")) is None:
            raise Refused(400, "invalid Host header")
        workspace_id = found["workspace_id"]
        cookies, _ = split_cookies(environ.get("HTTP_COOKIE"))
        query = dict(parse_qsl(environ.get("QUERY_STRING", ""), keep_blank_values=True))
        authorization = environ.get("HTTP_AUTHORIZATION", "")
        address_token = query.get("token", "")
        header_token = authorization[6:].strip() if authorization.lower().startswith("token ") else ""
        header_session = environ.get(SESSION_ENV, "")
        token = address_token or header_token or cookies.get(LAB_COOKIE, "")
        session = header_session or cookies.get(SESSION_COOKIE, "")
        # A browser sends cookies by itself, even on another site's request: those need the same origin.
        if not (address_token or header_token or header_session) and not _same_origin(environ):
            raise Refused(403, "A notebook is not opened from another site's page.")
        notebooks = self.services.notebooks
        if token:
            lab = notebooks.by_token(workspace_id, token)
            if lab is None:
                raise Refused(403, "This notebook's token is not valid (the notebook stopped, or it is not yours).")
            user = self.services.users.active_user(lab.plan.user_id)
            if user is None or not self.services.workspaces.may_read(user, workspace_id):
                raise Refused(403, "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_WORKSPACE")
            return lab, bool(address_token)
        if not session:
            raise Refused(401, "MSG_ERROR_INVALID_SESSION")
        user = self.services.sessions.resolve(session)
        if user is None:
            raise Refused(401, "MSG_ERROR_INVALID_SESSION")
        try:
            self.services.workspaces.readable(user, workspace_id)
        except DomainError as e:
            raise Refused(e.status, str(e)) from e
        own = notebooks.find(user.user_id, workspace_id)
        if own is None or not own.up:
            raise Refused(404, "No notebook of yours runs on this workspace: create one.")
        return own, False

    # -- a WebSocket --------------------------------------------------------------------------------------
    def _websocket(self, environ: dict[str, Any], start_response: StartResponse, lab: Lab, target: str,
                   headers: list[tuple[str, str]]) -> Iterable[bytes]:
        take = environ.get(TAKE_CONNECTION)
        if take is None:
            return _refuse(start_response, 501, "This server cannot carry WebSockets to notebooks.")
        if self.proxy.open_websockets(lab) >= self.proxy.max_websockets:
            return _refuse(start_response, 503, "The notebook has too many connections open: close some tabs.")
        connection = take()
        try:
            self.proxy.websocket(lab, connection, target, headers, _send_refusal)
        except (TooManyWebSockets, RuntimeError) as e:  # a race past the bound; no thread to be had
            _send_refusal(connection, 503, str(e))
            connection.close()
        start_response("101 Switching Protocols", [])  # nothing of it is sent: the connection is handed over
        return []


def _same_origin(environ: dict[str, Any]) -> bool:
    origin = environ.get("HTTP_ORIGIN")
    if not origin:
        return True
    return bool(_urlsplit(origin).netloc.lower() == str(environ.get("HTTP_HOST", "")).lower())


def _target(environ: dict[str, Any]) -> str:
    """The path and query as the caller sent them (percent-encoding kept), less the token."""
    raw = environ.get("REQUEST_URI") or quote(environ.get("PATH_INFO", "")) + (
        "?" + environ["QUERY_STRING"] if environ.get("QUERY_STRING") else "")
    path, _, query = raw.partition("?")
    if "token=" in query:
        kept = [(k, v) for k, v in parse_qsl(query, keep_blank_values=True) if k != "token"]
        query = urlencode(kept)
    return path + ("?" + query if query else "")


def _headers(environ: dict[str, Any]) -> list[tuple[str, str]]:
    found = [(key[5:].replace("_", "-").title(), str(value)) for key, value in environ.items()
             if key.startswith("HTTP_")]
    if environ.get("CONTENT_TYPE"):
        found.append(("Content-Type", environ["CONTENT_TYPE"]))
    return found


def _length(environ: dict[str, Any]) -> int | None:
    try:
        length = int(environ.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return None
    return length if length > 0 else None


def _body(environ: dict[str, Any]) -> Iterator[bytes]:
    stream = environ["wsgi.input"]
    left = _length(environ) or 0
    while left > 0:
        chunk = stream.read(min(65536, left))
        if not chunk:
            return
        left -= len(chunk)
        yield chunk


def _reason(status: int) -> str:
    with contextlib.suppress(ValueError):
        return HTTPStatus(status).phrase
    return ""


def _refuse(start_response: StartResponse, status: int, message: str) -> list[bytes]:
    body = to_json_bytes({"message": message})
    start_response(f"{status} {_reason(status)}", [("Content-Type", "application/json"),
                                                   ("Content-Length", str(len(body)))])
    return [body]


def _send_refusal(connection: socket.socket, status: int, message: str) -> None:
    """A refusal written on a connection taken out of waitress (its handshake is not answered otherwise)."""
    body = to_json_bytes({"message": message})
    with contextlib.suppress(OSError):
        connection.sendall((f"HTTP/1.1 {status} {_reason(status)}\r\nContent-Type: application/json\r\n"
                            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body)
