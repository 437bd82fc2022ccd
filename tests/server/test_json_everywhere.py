"""Every JSON the server reads goes through one reader with the body parser's limits, whatever carries it.

Generated from the catalogue: every query parameter, text body and body field it marks as JSON gets deep,
huge and invalid JSON, with the other parameters naming real resources of the caller (so the JSON is
what is judged, not a missing workspace).  The answer must be a refusal in the endpoint's own style whose
message names the problem, and the server must log no unexpected failure (which an answer in style B or
C would otherwise hide inside a 200).
"""

from __future__ import annotations

import io
import json
import logging
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app

from wasdi_sdk.catalog import BY_NAME, BodyKind, Endpoint, FailureKind, Style
from wasdi_server.api.framework import HANDLERS
from wasdi_server.json_reader import JsonReader, JsonRefused

MAX_BODY = 64 * 1024
"""The test server's ``max_json_body_bytes`` (small, so a huge body costs nothing to send)."""
HOSTILE = {
    "deep, unclosed (8,000 levels)": "[" * 8000,
    "deep objects": '{"a":' * 1200 + "1" + "}" * 1200,
    "one level too deep": "[" * 65 + "]" * 65,
    "deep, URL-encoded": "%5B" * 2700,
    "huge": "[" + "0," * (MAX_BODY // 2) + "0]",
    "invalid": '{"a": [1, 2',
}
PROBLEMS = ("nests deeper than", "larger than", "not valid JSON", "is too long", "not a valid JSON",
            "not a JSON object")
CONTRACT_500 = {"processors.upload": "a paramsSample that is not JSON is 500 'Parameter Sample is not a valid JSON'"}


def json_slots() -> list[tuple[str, str, str]]:
    """``(endpoint, carrier, name)``: every place the catalogue marks as holding JSON, on routed endpoints."""
    slots = []
    for name in sorted(HANDLERS):
        ep = BY_NAME[name]
        slots += [(name, "query", p.name) for p in ep.query if p.json]
        if ep.body.kind is BodyKind.TEXT and ep.body.json_text:
            slots.append((name, "text", ""))
        slots += [(name, "field", f) for f in ep.body.json_fields]
    return slots


SLOTS = json_slots()


def test_the_catalogue_marks_the_json_the_server_reads() -> None:
    marked = {(name, where) for name, _, where in SLOTS}
    for expected in [("processors.upload", "paramsSample"), ("processors.update", "paramsSample"),
                     ("processors.run_by_query", "encodedJson"), ("processors.run", ""),
                     ("processors.credits_for_run", ""), ("processors.save_ui", ""),
                     ("param_templates.create", "jsonParameters"), ("param_templates.update", "jsonParameters")]:
        assert expected in marked


@pytest.fixture(scope="module")
def estate(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Person, dict[str, str]]]:
    server = Server(Path(tmp_path_factory.mktemp("json")) / "data", max_json_body_bytes=MAX_BODY)
    server.services.launcher.stop()
    owner = server.add_user("owner@example.org")
    ws = str(server.sdk(owner).workspaces.create(name="json").string_value)
    server.add_user("buyer@example.org")
    app = make_app(server, owner, "jsonapp", isPublic=1, squareKilometerPrice=1.0, areaParameterName="bbox")
    r = server.post("/processorParamTempl/add", owner, json={"processorId": app["processorId"], "name": "t"})
    assert r.status_code == 200, r.text
    template = server.get("/processorParamTempl/getlist", owner, processorId=app["processorId"]).json[0]
    context = {"processorId": app["processorId"], "name": app["name"], "workspace": ws,
               "templateId": template["templateId"]}
    yield server, owner, context
    server.close()


def zip_upload(body_field: str) -> tuple[bytes, str]:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as bundle:
        bundle.writestr("myProcessor.py", "def run():\n    pass\n")
    boundary = "json-everywhere"
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="{body_field}"; filename="app.zip"\r\n'
            "Content-Type: application/zip\r\n\r\n").encode() + buffer.getvalue() + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def request_for(ep: Endpoint, carrier: str, slot: str, hostile: str,
                context: dict[str, str]) -> tuple[dict[str, str], bytes | None, str | None]:
    params = {p.name: context[p.name] for p in ep.query if p.name in context}
    body: bytes | None = None
    content_type: str | None = None
    if carrier == "query":
        params[slot] = hostile
    if ep.body.kind is BodyKind.MULTIPART:
        body, content_type = zip_upload(ep.body.field or "file")
    elif carrier == "text":
        body, content_type = hostile.encode(), "text/plain"
    elif ep.body.kind is BodyKind.JSON:
        fields = {f: context[f] for f in ("processorId", "templateId", "name") if f in context}
        body, content_type = json.dumps({**fields, slot: hostile}).encode(), "application/json"
    return params, body, content_type


def refusal(ep: Endpoint, status: int, answer: Any) -> tuple[int, str]:
    """The status and message of a refusal in ``ep``'s style (fails when the answer is not one)."""
    if ep.style is Style.STATUS:
        assert status >= 400, answer
        return status, str(answer.get("message"))
    assert status == 200, answer
    if ep.failure.kind is FailureKind.RUNNING_ERROR:
        assert answer["status"] == "ERROR", answer
        return 400, str(answer.get("message"))
    assert answer["boolValue"] is False, answer
    return int(answer["intValue"]), str(answer.get("stringValue"))


@pytest.mark.parametrize("hostile", list(HOSTILE), ids=list(HOSTILE))
@pytest.mark.parametrize("name, carrier, slot", SLOTS, ids=[f"{n}:{c}:{s}" for n, c, s in SLOTS])
def test_hostile_json_is_refused_in_the_endpoint_style(estate: tuple[Server, Person, dict[str, str]], name: str,
                                                       carrier: str, slot: str, hostile: str,
                                                       caplog: pytest.LogCaptureFixture) -> None:
    server, owner, context = estate
    ep = BY_NAME[name]
    params, body, content_type = request_for(ep, carrier, slot, HOSTILE[hostile], context)
    headers = {**owner.headers, **({"Content-Type": content_type} if content_type else {})}
    with caplog.at_level(logging.ERROR, logger="wasdi_server"):
        r = server.http.simulate_request(ep.method, ep.path, params=params, headers=headers, body=body)
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR], caplog.text[:2000]
    assert "Traceback" not in r.text and "RecursionError" not in r.text
    status, message = refusal(ep, r.status_code, r.json)
    assert any(p in message for p in PROBLEMS), (name, hostile, message[:300])
    assert status == (500 if name in CONTRACT_500 and "JSON" in message else 400), (status, message)


def test_the_reader_names_the_limit() -> None:
    reader = JsonReader(max_bytes=100, max_depth=3)
    assert reader.read('{"a": [1, {"b": 2}]}') == {"a": [1, {"b": 2}]}
    for text, problem in [("[[[[1]]]]", "nests deeper than 3 levels"), ("[" + "1," * 60 + "1]", "larger than 100"),
                          ("[1,", "not valid JSON"), ('"[[[[[["', None)]:
        if problem is None:
            assert reader.read(text) == "[[[[[["  # brackets inside strings do not nest
            continue
        with pytest.raises(JsonRefused, match=problem):
            reader.read(text, "the value")


def test_an_area_parameter_that_is_itself_deep_json_is_refused(estate: tuple[Server, Person, dict[str, str]],
                                                               caplog: pytest.LogCaptureFixture) -> None:
    """The area of an area-priced run may be a JSON text inside the JSON parameters: the same reader."""
    server, _, context = estate
    buyer = Person("buyer@example.org", server.services.sessions.open("buyer@example.org"))  # pays: the area counts
    with caplog.at_level(logging.ERROR, logger="wasdi_server"):
        r = server.post("/processors/getcredits", buyer, params={"processorId": context["processorId"]},
                        body=json.dumps({"bbox": "[" * 8000}), content_type="text/plain")
    assert not caplog.records, caplog.text[:2000]
    assert r.status_code == 400 and "nests deeper than" in r.json["message"], r.text[:300]
