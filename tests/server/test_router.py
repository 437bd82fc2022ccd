"""The router answers exact paths from a dictionary once the compiled router has matched them: it must
route every request exactly as falcon's compiled router does."""

from __future__ import annotations

import falcon
from falcon import testing
from falcon.routing import CompiledRouter
from tests.conftest import Server

from wasdi_server.api.router import StaticFirstRouter


class Named:
    def __init__(self, name: str) -> None:
        self.name = name

    def on_get(self, req: falcon.Request, resp: falcon.Response, **params: str) -> None:
        resp.media = {"resource": self.name, "params": params}


ROUTES = {
    "/ws/byuser": "byuser",
    "/ws/{workspace}": "one workspace",
    "/wasdiwebserver/rest/ws/byuser": "legacy byuser",
    "/images/{collection}/{name}": "image",
}
PATHS = ["/ws/byuser", "/ws/byuser", "/ws/abc", "/ws/byuser2", "/wasdiwebserver/rest/ws/byuser",
         "/images/a/b", "/images/a", "/nothing", "/ws", "/", "/ws/byuser/extra", "//ws/byuser"]


def routers() -> tuple[StaticFirstRouter, CompiledRouter]:
    ours, reference = StaticFirstRouter(), CompiledRouter()
    for template, name in ROUTES.items():
        for router in (ours, reference):
            router.add_route(template, Named(name))
    return ours, reference


def summary(found: tuple | None) -> tuple | None:
    if found is None:
        return None
    resource, method_map, params, template = found
    return resource.name, sorted(method_map), params, template


def test_every_path_routes_as_the_compiled_router_routes_it_first_and_later() -> None:
    ours, reference = routers()
    for _ in range(3):  # the first pass fills the memo; the later ones are answered from it
        assert [summary(ours.find(p)) for p in PATHS] == [summary(reference.find(p)) for p in PATHS]
    assert set(ours._static) == {"/ws/byuser", "/wasdiwebserver/rest/ws/byuser"}  # templates with fields are not kept


def test_params_of_a_remembered_route_are_a_new_dict_each_time() -> None:
    ours, _ = routers()
    first = ours.find("/ws/byuser")
    assert first is not None
    first[2]["injected"] = "x"  # falcon hands params to responders, which may change them
    again = ours.find("/ws/byuser")
    assert again is not None and again[2] == {}


def test_a_route_added_later_is_not_hidden_by_what_was_remembered() -> None:
    ours, _ = routers()
    assert summary(ours.find("/ws/byuser")) is not None
    ours.add_route("/ws/byuser", Named("replacement"))
    found = ours.find("/ws/byuser")
    assert found is not None and found[0].name == "replacement"


def test_the_server_app_uses_it(server: Server) -> None:
    assert isinstance(server.app._router, StaticFirstRouter)


def test_a_falcon_app_routes_through_it() -> None:
    app = falcon.App(router=StaticFirstRouter())
    app.add_route("/ws/{workspace}", Named("one"))
    app.add_route("/ws/byuser", Named("byuser"))
    client = testing.TestClient(app)
    for _ in range(2):
        assert client.simulate_get("/ws/byuser").json == {"resource": "byuser", "params": {}}
        assert client.simulate_get("/ws/w1").json == {"resource": "one", "params": {"workspace": "w1"}}
    assert client.simulate_get("/ws/w1/x").status_code == 404
