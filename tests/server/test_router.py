"""The router answers exact paths from a dictionary once the compiled router has matched them: it must
route every request exactly as falcon's compiled router does."""

from __future__ import annotations

import falcon
import pytest
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


def table(tag: str) -> list[tuple[str, Named]]:
    """ROUTES under both prefixes, with one template given twice (the later resource must win)."""
    rows = [(prefix + template, Named(f"{tag} {name}")) for template, name in ROUTES.items()
            for prefix in ("", "/legacy")]
    return [*rows, ("/ws/byuser", Named(f"{tag} byuser again"))]


def test_routes_added_at_once_route_as_routes_added_one_by_one() -> None:
    rows = table("one")
    reference = CompiledRouter()
    for template, resource in rows:
        reference.add_route(template, resource)
    ours = StaticFirstRouter()
    ours.add_routes(rows)
    paths = PATHS + ["/legacy" + p for p in PATHS]
    for _ in range(2):
        assert [summary(ours.find(p)) for p in paths] == [summary(reference.find(p)) for p in paths]
    assert summary(ours.find("/ws/byuser"))[0] == "one byuser again"  # type: ignore[index]


def test_routers_given_the_same_routes_each_route_to_their_own_resources() -> None:
    first, second = StaticFirstRouter(), StaticFirstRouter()
    first.add_routes(table("first"))
    second.add_routes(table("second"))  # the tree built for the first is copied, with the second's resources
    for path in ["/ws/abc", "/legacy/images/a/b", "/ws/byuser"]:
        for router, tag in ((first, "first"), (second, "second")):
            found = router.find(path)
            assert found is not None
            resource, method_map, _, _ = found
            assert resource.name.startswith(tag + " ")  # type: ignore[attr-defined]
            assert method_map["GET"].__self__ is resource
    client = testing.TestClient(falcon.App(router=second))
    assert client.simulate_get("/ws/w1").json == {"resource": "second one workspace", "params": {"workspace": "w1"}}
    assert client.simulate_post("/ws/w1").status_code == 405
    assert client.simulate_options("/ws/w1").headers["allow"] == "GET"


def test_a_responder_set_on_one_instance_is_found_as_falcon_finds_it() -> None:
    rows = table("own")
    odd = Named("odd")
    odd.on_put = odd.on_get  # type: ignore[attr-defined]
    rows.append(("/odd", odd))
    ours = StaticFirstRouter()
    ours.add_routes(rows)
    found = ours.find("/odd")
    assert found is not None and found[0] is odd and "PUT" in found[1]


def test_templates_falcon_app_refuses_are_refused_at_once_too() -> None:
    for bad in ("ws/byuser", "/ws//byuser"):
        with pytest.raises(ValueError, match="uri_template"):
            StaticFirstRouter().add_routes([(bad, Named("bad"))])


def test_a_router_with_routes_already_adds_more_one_by_one() -> None:
    ours = StaticFirstRouter()
    ours.add_route("/first", Named("first"))
    ours.add_routes(table("more"))
    assert summary(ours.find("/first"))[0] == "first"  # type: ignore[index]
    assert summary(ours.find("/ws/abc"))[0] == "more one workspace"  # type: ignore[index]



def test_a_falcon_keeping_its_tree_otherwise_gets_its_routes_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where falcon's router no longer keeps its tree where the copy looks for it, the routes are added as
    falcon adds them, and route the same."""
    def moved(table: object) -> None:
        raise AttributeError("'CompiledRouter' object has no attribute '_roots'")

    monkeypatch.setattr("wasdi_server.api.router._shapes", {})
    monkeypatch.setattr("wasdi_server.api.router._build_shape", moved)
    ours = StaticFirstRouter()
    ours.add_routes([(template, Named(name)) for template, name in ROUTES.items()])
    _, reference = routers()
    assert [summary(ours.find(p)) for p in PATHS] == [summary(reference.find(p)) for p in PATHS]
