"""Fuzz: generated and hostile input to every endpoint this server routes, driven by the catalogue.

For every routed endpoint, hypothesis draws query parameters (declared and junk), path values, a
body of the declared kind (or the wrong kind) and a session (owner, admin, none, bogus), and the
answer must hold: never a 5xx (unless the table below says the contract means a server fault there),
never traceback text, never an unexpected failure hidden in a style B or
C answer (the server logs each one: none may be logged), a failure in the endpoint's declared style, and a
success in its declared shape.  New endpoints are covered as soon as they are routed.

So that hostile values reach the code behind the first checks, parameters and body fields named like the
resources the owner has (``CONTEXT``: a workspace, a file in it, an app, a parameter template) often carry
their real values; the places the catalogue marks as JSON get deep, huge and invalid JSON; names get
names longer in bytes than file systems take.  ``make test`` runs ``EXAMPLES`` per endpoint: against the
server as it was before the JSON reader, the byte-counted names and the 401 confirmations, that found every
endpoint each of those broke (a deep JSON text, a too-long name behind a real workspace, an unknown checkout)
in three runs out of three; ``make fuzz`` (WASDI_FUZZ_EXAMPLES=300) runs many more.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import Server
from tests.server.app_fixtures import app_record

from wasdi_sdk.catalog import BY_NAME, BodyKind, Endpoint, FailureKind, ParamType, ResponseKind, Style
from wasdi_sdk.models import MODELS
from wasdi_server.api.framework import HANDLERS

EXAMPLES = int(os.environ.get("WASDI_FUZZ_EXAMPLES", "30"))
ROUTED = sorted(HANDLERS)

SERVER_FAULT_BY_CONTRACT = {
    # endpoint: why a 500 is the contract's answer to some input here
    "package_manager.list_packages": "500 when the app's stored package record is missing (an app never built)",
}
TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "/', "RecursionError", "UnicodeEncodeError")
LONG_NAMES = ["\u03a9" * 204, "\u03a9" * 128, "x" * 256, "\U0001d518" * 64 + ".tif", "\u03a9" * 120 + ".tif"]
"""Names of at most 255 characters but more than 255 bytes (and one of 256 characters)."""
JSON_HOSTILE = ["[" * 8000, '{"a":' * 1200 + "1" + "}" * 1200, "[" * 100 + "]" * 100, "%5B" * 2700,
                '{"a": [1, 2', "nul", "[" + "0," * 5000 + "0]"]
"""Deep (unclosed, objects, just past the limit, URL-encoded), invalid and long JSON texts."""
HOSTILE = ["", " ", "../../etc/passwd", "..", "a/b", "a\\b", "%00", "\x00", "\u0416.txt", "a\";x=\".txt",
           "' OR 1=1 --", "<script>alert(1)</script>", "x" * 5000, "-1", "0", "1e309", "NaN", "true", "null",
           "[]", "{}", "http://127.0.0.1/x", "file:///etc/passwd", "\ud800".encode("utf-8", "surrogatepass")
           .decode("utf-8", "replace"), "\U0001d518\U0001d52b", "*", ",", "a,b,,c", *LONG_NAMES, *JSON_HOSTILE]
NAME_PARAMS = frozenset({"name", "file", "filename", "fileName", "productName", "fileUrl", "folder"})
"""Parameters and fields that become file names somewhere: they get ``LONG_NAMES`` more often."""

text = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40))
json_values = st.recursive(st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
                           | st.floats(allow_nan=False) | text,
                           lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(text, children, max_size=4), max_leaves=12)
json_text = st.one_of(st.sampled_from(JSON_HOSTILE), st.sampled_from(JSON_HOSTILE), json_values.map(json.dumps))
"""For the places the catalogue marks as JSON: mostly hostile JSON texts."""


def param_value(kind: ParamType, name: str = "") -> st.SearchStrategy[str]:
    typed = {ParamType.INT: st.integers(-10, 10**12).map(str), ParamType.FLOAT: st.floats().map(str),
             ParamType.BOOL: st.sampled_from(["true", "false", "1", "yes"])}.get(kind)
    if name in NAME_PARAMS:
        return st.one_of(st.sampled_from(LONG_NAMES), text)
    return st.one_of(text, typed) if typed is not None else text


def with_context(name: str, values: st.SearchStrategy[Any], context: dict[str, str]) -> st.SearchStrategy[Any]:
    """``values``, or (twice as often) the real value of ``name`` when the owner has one."""
    if name not in context:
        return values
    real = st.just(context[name])
    return st.one_of(real, real, values)


@st.composite
def requests(draw: st.DrawFn, ep: Endpoint, context: dict[str, str]) -> dict[str, Any]:
    """Two times out of three a request the owner could make with one slot hostile, else anything at all
    (hypothesis tries the first choices of a strategy first: the targeted ones come first)."""
    mode = draw(st.sampled_from(["one slot", "anything", "one slot"]))
    return draw(one_hostile_slot(ep, context) if mode == "one slot" else anything(ep, context))


@st.composite
def anything(draw: st.DrawFn, ep: Endpoint, context: dict[str, str]) -> dict[str, Any]:
    query = {}
    for p in ep.query:
        if p.required or draw(st.booleans()):
            query[p.name] = draw(json_text if p.json else with_context(p.name, param_value(p.type, p.name), context))
    if draw(st.booleans()):
        query[draw(st.sampled_from(["junk", "token", "x" * 100]))] = draw(text)
    path = {name: draw(with_context(name, text, context)) for name in ep.path_params}
    headers: dict[str, str] = {}
    body: bytes | None = None
    kind = ep.body.kind
    if kind in (BodyKind.JSON, BodyKind.JSON_LIST) or draw(st.booleans()):
        if kind is BodyKind.JSON and ep.body.model and draw(st.booleans()):
            value: Any = {}
            for f in BY_NAME_FIELDS.get(ep.body.model, ()):
                if draw(st.booleans()):
                    value[f] = draw(json_text if f in ep.body.json_fields else with_context(f, json_values, context))
        else:
            value = draw(json_values)
        body = draw(st.sampled_from([json.dumps(value).encode(), b"{", b"[" * 300 + b"]" * 300,
                                     json.dumps(value).encode()]))
        headers["Content-Type"] = "application/json"
    elif kind in (BodyKind.TEXT, BodyKind.FORM):
        body = draw(json_text if ep.body.json_text else text).encode("utf-8", "surrogatepass")
        headers["Content-Type"] = "text/plain" if kind is BodyKind.TEXT else "application/x-www-form-urlencoded"
    elif kind is BodyKind.MULTIPART:
        body, headers["Content-Type"] = draw(multipart_body())
    who = draw(st.sampled_from(["owner", "owner", "admin", "none", "bogus"]))
    return {"path": fill_path(ep, path), "query": query, "headers": headers, "body": body, "who": who}


BENIGN = {ParamType.INT: "1", ParamType.FLOAT: "1.0", ParamType.BOOL: "true", ParamType.STR_LIST: "x",
          ParamType.STR: "x"}


@st.composite
def one_hostile_slot(draw: st.DrawFn, ep: Endpoint, context: dict[str, str]) -> dict[str, Any]:
    """The owner's request with real values where the owner has them, and one slot hostile: a slot the
    catalogue marks as JSON (or a name) three times out of four when the endpoint has one."""
    query = {p.name: context.get(p.name, BENIGN[p.type]) for p in ep.query if p.required or p.name in context}
    path = {name: context.get(name, "x") for name in ep.path_params}
    fields: dict[str, Any] = {}
    if ep.body.kind is BodyKind.JSON and ep.body.model:
        fields = {f: context[f] for f in BY_NAME_FIELDS.get(ep.body.model, ()) if f in context}
        fields.update({f: "{}" for f in ep.body.json_fields})
    text_body = "{}" if ep.body.json_text else "x"
    slots = [("query", p.name, p.json) for p in ep.query] + [("path", name, False) for name in ep.path_params]
    slots += [("field", f, f in ep.body.json_fields) for f in BY_NAME_FIELDS.get(ep.body.model or "", ())
              if ep.body.kind is BodyKind.JSON]
    slots += [("text", "", ep.body.json_text)] if ep.body.kind is BodyKind.TEXT else []
    special = ([slot for slot in slots if slot[2]] + [slot for slot in slots if not slot[2] and slot[1] in NAME_PARAMS]
               + [slot for slot in slots if slot[0] == "path"])  # JSON first: hypothesis tries first choices first
    if slots:
        where, name, is_json = draw(st.sampled_from(special if special and draw(st.integers(0, 3)) < 3 else slots))
        hostile = draw(st.sampled_from(JSON_HOSTILE) if is_json
                       else st.one_of(st.sampled_from(LONG_NAMES), text) if name in NAME_PARAMS else text)
        if where == "query":
            query[name] = hostile
        elif where == "path":
            path[name] = hostile
        elif where == "field":
            fields[name] = hostile
        else:
            text_body = hostile
    headers: dict[str, str] = {}
    body: bytes | None = None
    if ep.body.kind is BodyKind.JSON:
        body, headers["Content-Type"] = json.dumps(fields).encode(), "application/json"
    elif ep.body.kind is BodyKind.JSON_LIST:
        body, headers["Content-Type"] = json.dumps(draw(st.lists(text, max_size=3))).encode(), "application/json"
    elif ep.body.kind in (BodyKind.TEXT, BodyKind.FORM):
        body = text_body.encode("utf-8", "surrogatepass")
        headers["Content-Type"] = "text/plain" if ep.body.kind is BodyKind.TEXT else \
            "application/x-www-form-urlencoded"
    elif ep.body.kind is BodyKind.MULTIPART:
        body, headers["Content-Type"] = draw(multipart_body())
    return {"path": fill_path(ep, path), "query": query, "headers": headers, "body": body,
            "who": draw(st.sampled_from(["owner", "owner", "owner", "admin"]))}


@st.composite
def multipart_body(draw: st.DrawFn) -> tuple[bytes, str]:
    body = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + draw(text).encode(
        "utf-8", "replace") + b"\"\r\n\r\nxx\r\n--B--\r\n"
    return body, draw(st.sampled_from(["multipart/form-data; boundary=B", "multipart/form-data"]))


def fill_path(ep: Endpoint, values: dict[str, str]) -> str:
    path = ep.path
    for name, value in values.items():
        # A "/" in a value makes another path (no endpoint's business): the router answers it.
        path = path.replace("{" + name + "}", quote((value or "x").replace("/", "_"), safe=""))
    return path


def _model_fields() -> dict[str, tuple[str, ...]]:
    from wasdi_sdk.models import MODELS

    return {name: tuple(f.alias or key for key, f in cls.model_fields.items()) for name, cls in MODELS.items()}


BY_NAME_FIELDS = _model_fields()


class Unexpected(logging.Handler):
    """The dispatcher's "unexpected failure" log records: each is a fault, whatever the answer looked like."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("unexpected failure"):
            self.records.append(record)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = Server(Path(tmp_path_factory.mktemp("fuzz")) / "data")
    server.services.launcher.stop()  # the answers are under test, not what queued work does later
    server.add_user("owner@example.org")
    server.add_user("root@example.org", admin=True)
    yield server
    server.close()


@pytest.fixture(scope="module")
def unexpected() -> Iterator[Unexpected]:
    handler = Unexpected()
    logger = logging.getLogger("wasdi_server")
    logger.addHandler(handler)
    yield handler
    logger.removeHandler(handler)


def owner_context(server: Server) -> dict[str, str]:
    """The owner's workspace (with a file), app and parameter template, made again if a call removed them."""
    services = server.services
    owner = services.users.active_user("owner@example.org")
    workspace = next((w for w in services.workspaces.workspaces.find(userId=owner.user_id)), None)
    if workspace is None:
        workspace = services.workspaces.create(owner, "fuzz")
    services.workspaces.folder(workspace).mkdir(parents=True, exist_ok=True)
    (services.workspaces.folder(workspace) / "scene.bin").write_bytes(b"data")
    app = services.apps.records.by_name("fuzzapp")
    if app is None:
        app = services.store.collection("processors").insert(app_record(owner.user_id, "fuzzapp"))
    template = next(iter(services.param_templates.templates.find(processorId=app["processorId"])), None)
    if template is None:
        services.param_templates.add(owner, {"processorId": app["processorId"], "name": "fuzz"})
        template = services.param_templates.templates.find(processorId=app["processorId"])[0]
    ws, app_id, tid = str(workspace["workspaceId"]), str(app["processorId"]), str(template["templateId"])
    return {"workspace": ws, "workspaceId": ws, "originWorkspaceId": ws, "destinationWorkspaceId": ws,
            "processorId": app_id, "processor": app_id, "name": "fuzzapp", "processorName": "fuzzapp",
            "processorname": "fuzzapp", "templateId": tid, "processorParametersTemplate": tid,
            "file": "scene.bin", "filename": "scene.bin", "fileName": "scene.bin", "productName": "scene.bin",
            "payprov": "local"}


def check_answer(ep: Endpoint, status: int, body: bytes, content_type: str) -> None:
    where = f"{ep.method} {ep.path} ({ep.name})"
    if status >= 500:
        assert ep.name in SERVER_FAULT_BY_CONTRACT, f"{where}: {status} {body[:300]!r}"
    text_body = body.decode("utf-8", "replace")
    assert not any(marker in text_body for marker in TRACEBACK_MARKERS), f"{where}: {text_body[:500]}"
    is_json = content_type.startswith("application/json")
    parsed = json.loads(body) if is_json and body else None
    if status == 200 and parsed is not None:
        check_schema(ep, parsed, where)
    if ep.style is Style.STATUS:
        if status >= 400 and is_json:
            assert isinstance(parsed, dict) and "message" in parsed, f"{where}: {status} {text_body[:200]}"
    elif ep.failure.kind is FailureKind.PRIMITIVE_WITH_STATUS:
        if status != 200:
            assert isinstance(parsed, dict) and parsed.get("intValue") == status, f"{where}: {text_body[:200]}"
    else:
        # Styles B and C answer failures with HTTP 200 (204/304 where the contract names them).
        assert status in (200, 204, 304) or status in ep.statuses, f"{where}: {status} {text_body[:200]}"


def check_schema(ep: Endpoint, parsed: Any, where: str) -> None:
    """A 200 JSON answer has the declared shape (models validate; lists are lists)."""
    kind, model = ep.response.kind, ep.response.model
    id_field = ep.failure.id_field
    if kind is ResponseKind.MODEL and model and isinstance(parsed, dict):
        if id_field and not parsed.get(id_field):
            return  # the style-C failure (a default model): the SDK raises on it before reading it as the model
        if ep.failure.kind is FailureKind.RUNNING_ERROR and parsed.get("status") == "ERROR":
            return  # a refused run: the SDK raises on it too
        MODELS[model].model_validate(parsed)
    elif kind is ResponseKind.MODEL_LIST and model:
        assert isinstance(parsed, list), f"{where}: not a list: {str(parsed)[:200]}"
        for item in parsed:
            MODELS[model].model_validate(item)
    elif kind is ResponseKind.STRING_LIST:
        assert isinstance(parsed, list) and all(isinstance(v, str) for v in parsed), f"{where}: {str(parsed)[:200]}"


@pytest.mark.parametrize("name", ROUTED)
def test_fuzz_endpoint(fuzz_server: Server, unexpected: Unexpected, name: str) -> None:
    ep = BY_NAME[name]
    tokens = {"owner": fuzz_server.services.sessions.open("owner@example.org"),
              "admin": fuzz_server.services.sessions.open("root@example.org"), "bogus": "bogus-token"}

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(request=requests(ep, owner_context(fuzz_server)))
    def run(request: dict[str, Any]) -> None:
        headers = dict(request["headers"])
        token = tokens.get(request["who"])
        if token:
            headers["x-session-token"] = token
        unexpected.records.clear()
        result = fuzz_server.http.simulate_request(ep.method, request["path"], params=request["query"] or None,
                                                   headers=headers, body=request["body"])
        assert not unexpected.records, f"{ep.name}: {unexpected.records[0].getMessage()} {request}"[:2000]
        check_answer(ep, result.status_code, result.content, result.headers.get("content-type") or "")

    run()
