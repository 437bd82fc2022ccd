"""WASDI's own web client (a locally built wasdiClient2) served at ``/``, from the same origin as the API.

``wasdi-server serve --web-client DIR`` (setting ``web_client_dir``) serves the files of a built client.
API routes always win: this is a sink, asked only for paths no route matched.  ``/assets/environment.js``,
which the client reads at run time for its server address, is written here for each request's origin
(the API under the original ``/wasdiwebserver/rest`` prefix), so the client needs no CORS and no editing.
A path without a file is the client's own route (``/edit/...``): it gets ``index.html`` when the browser
asks for a page, and 404 otherwise.  The project ships none of the client's files: their licence is theirs.
"""

from __future__ import annotations

import json
import mimetypes
from pathlib import Path

import falcon

from wasdi_sdk.models.events import BrokerAddress

from ..errors import BadRequest
from ..messages import broker_address
from ..paths import inside
from ..settings import Settings
from .framework import LEGACY_BASE_PATH
from .layers import WMS_ROUTE

ENVIRONMENT_JS = "assets/environment.js"
COOKIE_PASSCODE = "session-cookie"
"""The passcode written for the built-in broker, which knows the browser by its session cookie instead."""


def environment_js(origin: str, broker: BrokerAddress) -> str:
    """The client's run-time settings for a server reached at ``origin`` (``http://host:port``).

    wasdiClient2 reads one global, ``window.__env``, once at start (its ``EnvService``), and falls back
    to wasdi.net's addresses for every key that is missing *or empty* (``value || default``).  So every
    key it reads is given here, each pointing at this origin: an empty one would send the browser to
    wasdi.net.  ``url`` is the API root without ``rest`` (the client appends it); ``authUrl`` ends in
    ``realms/wasdi`` (the client strips that to set up its identity provider, which never redirects:
    the login form posts ``/auth/login``); ``webstompUrl`` is where the server's messages are heard (the
    built-in broker, or RabbitMQ's Web-STOMP), and ``RABBIT_USER``/``RABBIT_PASSWORD`` what the client logs
    in there with: the configured Web-STOMP user for RabbitMQ; for the built-in broker, which knows the
    browser by the session cookie it got at login, words that say so.
    """
    base = origin.rstrip("/")
    values = {
        "production": True,
        "url": f"{base}{LEGACY_BASE_PATH.removesuffix('rest')}",
        "baseurl": f"{base}/",
        "authUrl": f"{base}/auth/realms/wasdi",
        "keycloakJs": f"{base}/auth/js/keycloak.js",
        "webstompUrl": broker.url,
        "wmsUrl": f"{base}{WMS_ROUTE}?",
        "RABBIT_USER": broker.login,
        "RABBIT_PASSWORD": COOKIE_PASSCODE if broker.session_as_passcode else broker.passcode,
    }
    body = json.dumps(values, indent=2)
    return ("// Written by wasdi-server for this origin: the web client's run-time settings.\n"
            f"window.__env = {body};\n")


class WebClient:
    """The sink serving the client's files."""

    def __init__(self, folder: Path, settings: Settings | None = None) -> None:
        self.folder = folder.resolve()
        self.settings = settings or Settings()
        if not (self.folder / "index.html").is_file():
            raise ValueError(f"{folder} holds no index.html: give the folder of a built web client "
                             "(the browser folder of its build, dist/<name>/browser: see docs/server.md)")

    def __call__(self, req: falcon.Request, resp: falcon.Response, **kwargs: object) -> None:
        if req.method not in ("GET", "HEAD"):
            raise falcon.HTTPNotFound()
        relative = req.path.lstrip("/")
        if relative == ENVIRONMENT_JS:
            resp.content_type = "application/javascript; charset=utf-8"
            resp.cache_control = ["no-store"]
            resp.text = environment_js(f"{req.scheme}://{req.netloc}",
                                       broker_address(self.settings, req.scheme, req.netloc))
            return
        path = self._file(relative or "index.html")
        if path is None:
            last = relative.rsplit("/", 1)[-1]
            if "." in last or "text/html" not in (req.accept or ""):
                raise falcon.HTTPNotFound()
            path = self.folder / "index.html"  # one of the client's own routes
        resp.content_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        resp.set_stream(open(path, "rb"), path.stat().st_size)  # noqa: SIM115 - falcon closes it
        if path.name == "index.html":
            resp.cache_control = ["no-cache"]

    def _file(self, relative: str) -> Path | None:
        parts = [p for p in relative.split("/") if p]
        try:
            path = inside(self.folder, *parts) if parts else self.folder
        except BadRequest:
            return None
        return path if path.is_file() else None
