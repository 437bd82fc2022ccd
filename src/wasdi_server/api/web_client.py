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

from ..errors import BadRequest
from ..services.paths import inside
from .framework import LEGACY_BASE_PATH

ENVIRONMENT_JS = "assets/environment.js"


def environment_js(origin: str) -> str:
    """The client's run-time settings for a server reached at ``origin`` (``http://host:port``)."""
    base = origin.rstrip("/")
    api_root = f"{base}{LEGACY_BASE_PATH.removesuffix('rest')}"  # the client calls url + "rest"
    values = {
        "production": True,
        "url": api_root,
        "baseurl": api_root,
        "authUrl": "",  # no identity-provider redirect: the login form posts /auth/login
        "keycloakJs": "",
        "webstompUrl": "",  # no message broker: the client polls
        "wmsUrl": f"{base}/",
    }
    body = json.dumps(values, indent=2)
    return ("// Written by wasdi-server for this origin: the web client's run-time settings.\n"
            f"(function (w) {{\n  var env = {body};\n"
            "  w.__env = Object.assign(w.__env || {}, env);\n"
            "  w.env = Object.assign(w.env || {}, env);\n"
            "  w.environment = Object.assign(w.environment || {}, env);\n"
            "})(window);\n")


class WebClient:
    """The sink serving the client's files."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder.resolve()
        if not (self.folder / "index.html").is_file():
            raise ValueError(f"{folder} holds no index.html: give the folder of a built web client "
                             "(its dist/<name> folder, see docs/server.md)")

    def __call__(self, req: falcon.Request, resp: falcon.Response, **kwargs: object) -> None:
        if req.method not in ("GET", "HEAD"):
            raise falcon.HTTPNotFound()
        relative = req.path.lstrip("/")
        if relative == ENVIRONMENT_JS:
            resp.content_type = "application/javascript; charset=utf-8"
            resp.cache_control = ["no-store"]
            resp.text = environment_js(f"{req.scheme}://{req.netloc}")
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
