"""``create_app``: the Falcon application of the WASDI server."""

from __future__ import annotations

import falcon

from . import api  # noqa: F401  (registers every handler)
from .api.framework import route_table
from .services import Services, build_services
from .settings import Settings, load_settings

LEGACY_BASE_PATH = "/wasdiwebserver/rest"


class BasePathMiddleware:
    """Serves the API both at the root and under ``/wasdiwebserver/rest`` (the original server's path)."""

    def process_request(self, req: falcon.Request, resp: falcon.Response) -> None:
        if req.path.startswith(LEGACY_BASE_PATH + "/"):
            req.path = req.path[len(LEGACY_BASE_PATH):]
            req.context.base_path = LEGACY_BASE_PATH
        else:
            req.context.base_path = ""


class WasdiApp(falcon.App):
    """The Falcon app, with the services it serves (``app.services``)."""

    services: Services


def create_app(settings: Settings | None = None, services: Services | None = None) -> WasdiApp:
    """The WSGI app.  Opens the store unless ``services`` is given; ``app.services`` holds them."""
    services = services or build_services(settings or load_settings())
    app = WasdiApp(middleware=[BasePathMiddleware()], cors_enable=True)
    app.req_options.auto_parse_form_urlencoded = False
    app.req_options.strip_url_path_trailing_slash = True
    for path, resource in route_table(services).items():
        app.add_route(path, resource)
    app.services = services
    return app
