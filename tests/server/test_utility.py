"""/wasdi: hello and feedback."""

from __future__ import annotations

import pytest
from tests.conftest import Person, Server


def test_hello_needs_no_session(server: Server) -> None:
    r = server.get("/wasdi/hello")
    assert r.status_code == 200 and r.json == {"stringValue": "Hello Wasdi!!"}


def test_feedback_is_mailed_to_the_operators(server: Server, alice: Person) -> None:
    r = server.post("/wasdi/feedback", alice, json={"title": "Idea", "message": "More missions please"})
    assert r.status_code == 200 and r.json == {"intValue": 201, "boolValue": True}
    mail = [m for m in server.mails() if m["To"] == server.settings.admin_email][-1]
    assert mail["Subject"] == "WASDI feedback: Idea"
    assert "alice@example.org" in mail.get_content() and "More missions please" in mail.get_content()


@pytest.mark.parametrize("body", [{"title": "x"}, {"message": "x"}, {"title": " ", "message": "x"}, None])
def test_feedback_missing_parts_is_404_in_the_body(server: Server, alice: Person, body) -> None:
    r = server.post("/wasdi/feedback", alice, json=body)
    assert r.status_code == 200 and r.json["intValue"] == 404 and r.json["boolValue"] is False


def test_feedback_without_session_is_401_in_the_body(server: Server) -> None:
    r = server.post("/wasdi/feedback", json={"title": "x", "message": "y"})
    assert r.status_code == 200 and r.json["intValue"] == 401 and r.json["boolValue"] is False
