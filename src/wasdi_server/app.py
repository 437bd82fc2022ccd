"""``create_app``: the Falcon application of the WASDI server."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import falcon

from . import api  # registers every handler (and api.checkout, the payment pages)
from .api import openapi
from .api.framework import LEGACY_BASE_PATH, route_table
from .api.host_header import HostHeaderGuard
from .api.notebook_proxy import PREFIX as NOTEBOOK_PREFIX
from .api.notebook_proxy import NotebookProxy
from .api.router import StaticFirstRouter
from .api.web_client import WebClient
from .composition import Services, build_services
from .nodes import endpoints as node_endpoints
from .settings import Settings, load_settings

if TYPE_CHECKING:
    import falcon.asgi

    # falcon types its CORS middleware as one for both WSGI and ASGI, parameterised by ASGI's classes
    CORSMiddleware = falcon.CORSMiddleware[falcon.asgi.Request, falcon.asgi.Response]


class WasdiApp(falcon.App[falcon.Request, falcon.Response]):
    """The Falcon app, with the services it serves (``app.services``)."""

    services: Services
    notebook_proxy: NotebookProxy

    def __call__(self, env: dict[str, Any], start_response: Any) -> Any:
        # A lab's pages and WebSockets are carried as they are, headers and bodies untouched: plain WSGI.
        if env.get("PATH_INFO", "").startswith(NOTEBOOK_PREFIX):
            return self.notebook_proxy(env, start_response)
        return super().__call__(env, start_response)


def create_app(settings: Settings | None = None, services: Services | None = None) -> WasdiApp:
    """The WSGI app.  Opens the store unless ``services`` is given; ``app.services`` holds them."""
    settings = services.settings if services is not None else settings or load_settings()
    # Checked before the store is opened: a wrong folder stops the start with nothing to clean up.
    web_client = WebClient(Path(settings.web_client_dir), settings) if settings.web_client_dir else None
    if services is None:
        services = build_services(settings)
        services.start()
    origins = services.settings.cors_allow_origins
    # first: nothing reads a Host header it has not checked
    middleware: list[HostHeaderGuard | CORSMiddleware] = [HostHeaderGuard()]
    if origins:
        middleware.append(falcon.CORSMiddleware(allow_origins=origins if origins != ["*"] else "*"))
    router = StaticFirstRouter()
    app = WasdiApp(middleware=middleware, router=router)
    app.req_options.auto_parse_form_urlencoded = False
    app.req_options.strip_url_path_trailing_slash = True
    routes: dict[str, object] = dict(route_table(services))
    routes[api.checkout.ROUTE] = api.checkout.CheckoutPage(services)  # payment providers' pages
    routes[api.layers.ROUTE] = api.layers.LayerImage(services)  # map layers of the local map server
    routes[api.layers.WMS_ROUTE] = api.layers.WebMapService(services)  # their WMS
    routes[api.messages.ROUTE] = api.messages.BrokerAddressResource(services)  # where to listen to messages
    routes[openapi.ROUTE] = openapi.OpenAPIDocument()  # the API described, for tools and the fuzz test
    for node_call in node_endpoints.ROUTES:  # calls only the nodes of a deployment make to each other
        routes[node_call.ROUTE] = node_call(services)
    # Every route also lives under the original server's path, so clients configured for it work as they are.
    table = [(prefix + path, resource) for path, resource in routes.items() for prefix in ("", LEGACY_BASE_PATH)]
    # Compiled now, at start (else the first request pays for compiling ~450 routes), from a tree built once per
    # process: the tests and a deployment's nodes build many apps of the same routes.
    router.add_routes(table)
    if web_client is not None:
        app.add_sink(web_client, prefix="/")  # asked only for paths no API route matched
    app.services = services
    app.notebook_proxy = NotebookProxy(services)
    return app
