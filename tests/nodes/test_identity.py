"""Who a node is (nodes/identity.py): the main node, the settings a node of a deployment needs, and the node
secret that alone opens the node-only calls."""

from __future__ import annotations

import pytest

from tests.conftest import Person, Server
from wasdi_server.nodes.identity import FROM_HEADER, SECRET_HEADER, NodeConfigurationError, NodeIdentity

SECRET = "0123456789abcdef-secret"


def node(code: str = "wasdi", **kwargs: str) -> NodeIdentity:
    values = {"public_url": "http://10.0.0.1:8080/", "store_url": "postgresql://db/wasdi", "secret": SECRET,
              "main_url": "", **kwargs}
    return NodeIdentity.from_settings(code, values["public_url"], values["store_url"], values["secret"],
                                      values["main_url"])


def test_the_main_node_is_the_one_coded_wasdi_and_knows_its_own_address() -> None:
    main, compute = node(), node("node1", main_url="http://10.0.0.1:8080/")
    assert main.is_main and main.in_deployment and main.main_url == "http://10.0.0.1:8080"
    assert not compute.is_main and compute.main_url == "http://10.0.0.1:8080"
    looked_up = node("node2")
    looked_up.main_url_lookup = lambda: "http://main.example/"
    assert looked_up.main_url == "http://main.example"  # the address the main node registered
    lone = NodeIdentity.from_settings("wasdi", "", "", "", "")
    assert lone.is_main and not lone.in_deployment
    lone.check_serving()  # a single laptop needs nothing


def test_only_the_deployments_secret_makes_a_node_call() -> None:
    main = node()
    assert main.is_node_caller(SECRET)
    assert not main.is_node_caller(SECRET[:-1]) and not main.is_node_caller("") and not main.is_node_caller(None)
    headers = {SECRET_HEADER: SECRET, FROM_HEADER: "node1"}
    assert main.is_node_call(headers.get)
    assert not main.is_node_call({FROM_HEADER: "node1"}.get)  # a user's header alone is nothing
    assert main.node_headers() == {SECRET_HEADER: SECRET, FROM_HEADER: "wasdi"}
    assert not NodeIdentity.from_settings("wasdi", "", "", SECRET, "").is_node_caller(SECRET)  # no deployment


@pytest.mark.parametrize("changes,problem", [({"secret": ""}, "node_secret must be set"),
                                             ({"secret": "short"}, "16 characters"),
                                             ({"public_url": ""}, "public_url must be set")])
def test_a_node_of_a_deployment_refuses_to_serve_without_what_it_needs(changes: dict[str, str], problem: str) -> None:
    with pytest.raises(NodeConfigurationError, match=problem):
        node("node1", **changes).check_serving()
    with pytest.raises(NodeConfigurationError, match="node_code must not be empty"):
        node(" ")


def test_a_lone_servers_node_calls_refuse_everyone(server: Server, alice: Person) -> None:
    r = server.http.simulate_get("/nodes/appfiles", params={"processorId": "x"},
                                 headers={**alice.headers, SECRET_HEADER: ""})
    assert r.status_code == 403 and "only the nodes" in r.json["message"]
    assert server.services.forwarder is None and server.services.outbox is None  # nothing of a deployment runs
