"""The session cookie: for the two things a browser asks for without the session header.

WASDI's web client sends its session as the ``x-session-token`` header on API calls, but its map asks
``/wms`` for tiles, and its browser opens the broker's WebSocket, with no header at all.  So a login (and
each session check, which the client makes when it comes back to a stored session) also sets
``wasdi_session``: HttpOnly (page scripts never read it), SameSite=Strict (no other site's page sends
it), Secure when the server is reached over TLS, expiring with the session's idle time; a logout ends it.
Only ``/wms``, the layer images, the built-in broker and a notebook's path (``notebook_proxy``, which also
refuses a cookie sent from another site's page) accept it: every other endpoint still wants the header, so a
page of another origin can make no change with it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import falcon

from ..domains.accounts.sessions import SESSION_COOKIE, token_from_cookies

if TYPE_CHECKING:
    from .framework import Call


def _secure(req: falcon.Request, public_url: str) -> bool:
    return req.scheme == "https" or public_url.lower().startswith("https://")


def give(call: Call, token: str) -> None:
    """Set the cookie on the answer of ``call``."""
    secure = _secure(call.request, call.services.settings.public_url)
    max_age = int(call.services.settings.session_idle_hours * 3600)

    def set_cookie(resp: falcon.Response) -> None:
        resp.set_cookie(SESSION_COOKIE, token, max_age=max_age, path="/", secure=secure, http_only=True,
                        same_site="Strict")

    call.on_answer.append(set_cookie)


def end(call: Call) -> None:
    """Tell the browser to forget the cookie."""
    secure = _secure(call.request, call.services.settings.public_url)

    def unset(resp: falcon.Response) -> None:
        # An expiry in the past (falcon leaves out a Max-Age of 0).
        resp.set_cookie(SESSION_COOKIE, "", expires=datetime(1970, 1, 1, tzinfo=UTC), path="/", secure=secure,
                        http_only=True, same_site="Strict")

    call.on_answer.append(unset)


def token_of(req: falcon.Request) -> str | None:
    """The session token a browser sent as the cookie."""
    return token_from_cookies(req.get_header("Cookie"))
