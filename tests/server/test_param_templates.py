"""/processorParamTempl: CRUD, readOnly, sharing ("Already Shared."), each endpoint's failure style."""

from __future__ import annotations

from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app

BASE = "/processorParamTempl"


@pytest.fixture
def app(server: Server, alice: Person) -> dict[str, Any]:
    return make_app(server, alice, "ndvi", isPublic=1)


def add(server: Server, who: Person, app: dict[str, Any], name: str = "t1", params: str = '{"a": 1}') -> Any:
    return server.post(f"{BASE}/add", who, json={"processorId": app["processorId"], "name": name,
                                                  "description": "d", "jsonParameters": params})


def only_template(server: Server, who: Person, app: dict[str, Any]) -> dict[str, Any]:
    listed = server.get(f"{BASE}/getlist", who, processorId=app["processorId"]).json
    assert len(listed) == 1
    return dict(listed[0])


def test_create_get_list_update_delete(server: Server, alice: Person, app: dict[str, Any]) -> None:
    r = add(server, alice, app)
    assert r.status_code == 200 and r.text == ""
    listed = only_template(server, alice, app)
    assert listed["name"] == "t1" and listed["userId"] == alice.user_id and listed["readOnly"] is False
    assert len(listed["updateDate"]) == 19  # yyyy-MM-dd HH:mm:ss
    got = server.get(f"{BASE}/get", alice, templateId=listed["templateId"]).json
    assert got["jsonParameters"] == '{"a": 1}' and got["description"] == "d" and got["creationDate"]
    r = server.post(f"{BASE}/update", alice, json={"templateId": listed["templateId"],
                                                    "processorId": app["processorId"], "name": "renamed",
                                                    "jsonParameters": '{"b": 2}'})
    assert r.status_code == 200, r.text
    got = server.get(f"{BASE}/get", alice, templateId=listed["templateId"]).json
    assert got["name"] == "renamed" and got["jsonParameters"] == '{"b": 2}' and got["userId"] == alice.user_id
    assert server.delete(f"{BASE}/delete", alice, templateId=listed["templateId"]).status_code == 200
    assert server.get(f"{BASE}/getlist", alice, processorId=app["processorId"]).json == []
    assert server.delete(f"{BASE}/delete", alice, templateId=listed["templateId"]).status_code == 400


@pytest.mark.parametrize("body, status", [
    ({"name": "x"}, 400),                                   # no processor
    ({"processorId": "nope", "name": "x"}, 400),            # unknown processor
    ({"processorId": "APP", "name": ""}, 400),              # no name
    ({"processorId": "APP", "name": "x", "jsonParameters": "{not json"}, 400),
    ({"processorId": "APP", "name": "x" * 500}, 400),
])
def test_add_refuses_bad_input(server: Server, alice: Person, app: dict[str, Any], body: dict[str, Any],
                               status: int) -> None:
    body = {k: (app["processorId"] if v == "APP" else v) for k, v in body.items()}
    r = server.post(f"{BASE}/add", alice, json=body)
    assert r.status_code == status and "message" in r.json


def test_bad_bodies_and_sessions(server: Server, alice: Person, app: dict[str, Any]) -> None:
    assert server.post(f"{BASE}/add", alice, body="[1,2]", content_type="application/json").status_code == 400
    assert server.post(f"{BASE}/add", alice, body="{", content_type="application/json").status_code == 400
    assert server.post(f"{BASE}/add", None, json={"processorId": app["processorId"], "name": "x"}).status_code == 401
    assert server.get(f"{BASE}/get", None, templateId="x").status_code == 401
    assert server.get(f"{BASE}/getlist", alice).status_code == 400
    assert server.get(f"{BASE}/getlist", alice, processorId="nope").status_code == 400
    assert server.get(f"{BASE}/get", alice, templateId="nope").status_code == 403
    assert server.post(f"{BASE}/update", alice, json={"templateId": "nope", "processorId": app["processorId"],
                                                       "name": "n"}).status_code == 400


def test_private_app_templates_need_access_to_the_app(server: Server, alice: Person, stranger: Person) -> None:
    private = make_app(server, alice, "secret")
    assert add(server, stranger, private).status_code == 403
    assert server.get(f"{BASE}/getlist", stranger, processorId=private["processorId"]).status_code == 403


def test_permission_matrix(server: Server, alice: Person, writer: Person, reader: Person, stranger: Person,
                           admin: Person, app: dict[str, Any]) -> None:
    add(server, alice, app)
    tid = only_template(server, alice, app)["templateId"]
    for who, rights in ((writer, "write"), (reader, "read")):
        r = server.put(f"{BASE}/share/add", alice, processorParametersTemplate=tid, userId=who.user_id, rights=rights)
        assert r.json == {"boolValue": True, "intValue": 200, "stringValue": "Done"}
    assert only_template(server, writer, app)["readOnly"] is False
    assert only_template(server, reader, app)["readOnly"] is True
    assert server.get(f"{BASE}/getlist", stranger, processorId=app["processorId"]).json == []
    assert server.get(f"{BASE}/get", reader, templateId=tid).json["readOnly"] is True
    assert server.get(f"{BASE}/get", stranger, templateId=tid).status_code == 403
    assert server.get(f"{BASE}/get", admin, templateId=tid).json["readOnly"] is False

    def update(who: Person) -> int:
        return server.post(f"{BASE}/update", who, json={"templateId": tid, "processorId": app["processorId"],
                                                         "name": f"by {who.user_id}"}).status_code

    assert (update(alice), update(writer), update(admin), update(reader), update(stranger)) == \
        (200, 200, 200, 403, 403)
    # The writer may share further; the reader and stranger may not (403 in intValue, HTTP 200).
    carol = server.add_user("carol@example.org")
    r = server.put(f"{BASE}/share/add", reader, processorParametersTemplate=tid, userId=carol.user_id)
    assert r.status_code == 200 and r.json["boolValue"] is False and r.json["intValue"] == 403
    r = server.put(f"{BASE}/share/add", writer, processorParametersTemplate=tid, userId=carol.user_id)
    assert r.json["stringValue"] == "Done"
    # A stranger cannot delete; a sharer's delete only removes their own sharing.
    assert server.delete(f"{BASE}/delete", stranger, templateId=tid).status_code == 403
    assert server.delete(f"{BASE}/delete", reader, templateId=tid).status_code == 200
    assert server.get(f"{BASE}/get", reader, templateId=tid).status_code == 403
    assert server.get(f"{BASE}/get", alice, templateId=tid).status_code == 200
    # The owner's delete removes the template and every sharing.
    assert server.delete(f"{BASE}/delete", alice, templateId=tid).status_code == 200
    assert server.get(f"{BASE}/getlist", writer, processorId=app["processorId"]).json == []
    assert server.services.sharing.sharings.find(resourceId=tid) == []


def test_sharing_rules_in_style_b(server: Server, alice: Person, bob: Person, app: dict[str, Any]) -> None:
    add(server, alice, app)
    tid = only_template(server, alice, app)["templateId"]

    def share(user: str, who: Person | None = alice, template: str = tid) -> dict[str, Any]:
        r = server.put(f"{BASE}/share/add", who, processorParametersTemplate=template, userId=user)
        assert r.status_code == 200
        return dict(r.json)

    assert share(bob.user_id) == {"boolValue": True, "intValue": 200, "stringValue": "Done"}
    assert share(bob.user_id) == {"boolValue": True, "intValue": 200, "stringValue": "Already Shared."}
    assert share(alice.user_id)["intValue"] == 400          # self-share
    assert share("ghost@example.org")["intValue"] == 400    # unknown user
    assert share(bob.user_id, template="nope")["intValue"] == 400
    assert share(bob.user_id, who=None)["intValue"] == 401
    assert share(alice.user_id, who=bob)["intValue"] == 403  # a reader: refused before "with the owner"
    listed = server.get(f"{BASE}/share/byprocessorParametersTemplate", alice, processorParametersTemplate=tid).json
    assert listed == [{"processorParametersTemplateId": tid, "userId": bob.user_id, "ownerId": alice.user_id,
                       "permissions": "read"}]
    for who, template in ((None, tid), (alice, "nope")):
        r = server.get(f"{BASE}/share/byprocessorParametersTemplate", who, processorParametersTemplate=template)
        assert r.status_code == 200 and r.json == []
    stranger = server.add_user("s@example.org")
    assert server.get(f"{BASE}/share/byprocessorParametersTemplate", stranger,
                      processorParametersTemplate=tid).json == []

    def unshare(user: str, who: Person | None = alice) -> dict[str, Any]:
        r = server.delete(f"{BASE}/share/delete", who, processorParametersTemplate=tid, userId=user)
        assert r.status_code == 200
        return dict(r.json)

    assert unshare("ghost@example.org")["intValue"] == 400
    assert unshare(bob.user_id, who=None)["intValue"] == 401
    assert unshare(bob.user_id) == {"boolValue": True, "intValue": 200, "stringValue": "Done"}
    assert server.get(f"{BASE}/share/byprocessorParametersTemplate", alice, processorParametersTemplate=tid).json == []
    assert len(server.mails()) >= 1


def test_cascades_on_app_delete_and_user_delete(server: Server, alice: Person, bob: Person,
                                                app: dict[str, Any]) -> None:
    service = server.services.param_templates
    add(server, alice, app, "mine")
    add(server, bob, app, "bobs")
    bobs = only_template(server, bob, app)["templateId"]
    server.put(f"{BASE}/share/add", bob, processorParametersTemplate=bobs, userId=alice.user_id)
    service.delete_all_of_user(bob.user_id)
    service.delete_all_of_user(bob.user_id)  # a second call is a no-op
    assert [t["name"] for t in server.get(f"{BASE}/getlist", alice, processorId=app["processorId"]).json] == ["mine"]
    assert server.services.sharing.sharings.find(resourceId=bobs) == []
    service.on_app_delete(app)
    service.on_app_delete(app)
    assert server.services.store.collection("processor_parameter_templates").all() == []
