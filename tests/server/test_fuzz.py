"""Fuzz: generated and hostile input to every endpoint this server routes, driven by the catalogue.

For every routed endpoint, hypothesis draws query parameters (declared and junk), path values, a
body of the declared kind (or the wrong kind) and a session (owner, admin, none, bogus), and the
answer must hold: never a 5xx (unless the table below says the contract means a server fault there),
never traceback text, a failure in the endpoint's declared style, and a success in its declared
shape.  New endpoints are covered as soon as they are routed.

``make test`` runs a few examples per endpoint; ``make fuzz`` (WASDI_FUZZ_EXAMPLES=300) many more.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.conftest import Server

from wasdi_sdk.catalog import BY_NAME, BodyKind, Endpoint, FailureKind, ParamType, ResponseKind, Style
from wasdi_sdk.models import MODELS
from wasdi_server.api.framework import HANDLERS

EXAMPLES = int(os.environ.get("WASDI_FUZZ_EXAMPLES", "8"))
ROUTED = sorted(HANDLERS)

SERVER_FAULT_BY_CONTRACT = {
    # endpoint: why a 500 is the contract's answer to some input here
    "credits.confirm_payment": "500 verification failure (an unknown or unpaid checkout session)",
    "subscriptions.confirm_payment": "500 verification failure (an unknown or unpaid checkout session)",
    "processors.confirm_payment": "500 verification failure (an unknown or unpaid checkout session)",
}
TRACEBACK_MARKERS = ("Traceback (most recent call last)", 'File "/', "RecursionError", "UnicodeEncodeError")

HOSTILE = ["", " ", "../../etc/passwd", "..", "a/b", "a\\b", "%00", "\x00", "Ж.txt", "a\";x=\".txt",
           "' OR 1=1 --", "<script>alert(1)</script>", "x" * 5000, "-1", "0", "1e309", "NaN", "true", "null",
           "[]", "{}", "http://127.0.0.1/x", "file:///etc/passwd", "\ud800".encode("utf-8", "surrogatepass")
           .decode("utf-8", "replace"), "\U0001d518\U0001d52b", "*", ",", "a,b,,c"]

text = st.one_of(st.sampled_from(HOSTILE), st.text(max_size=40))
json_values = st.recursive(st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
                           | st.floats(allow_nan=False) | text,
                           lambda children: st.lists(children, max_size=4)
                           | st.dictionaries(text, children, max_size=4), max_leaves=12)


def param_value(kind: ParamType) -> st.SearchStrategy[str]:
    typed = {ParamType.INT: st.integers(-10, 10**12).map(str), ParamType.FLOAT: st.floats().map(str),
             ParamType.BOOL: st.sampled_from(["true", "false", "1", "yes"])}.get(kind)
    return st.one_of(text, typed) if typed is not None else text


@st.composite
def requests(draw: st.DrawFn, ep: Endpoint) -> dict[str, Any]:
    query = {p.name: draw(param_value(p.type)) for p in ep.query if draw(st.booleans()) or p.required}
    if draw(st.booleans()):
        query[draw(st.sampled_from(["junk", "token", "x" * 100]))] = draw(text)
    path = ep.path
    for name in ep.path_params:
        # A "/" in a value makes another path (no endpoint's business): the router answers it.
        value = (draw(text) or "x").replace("/", "_")
        path = path.replace("{" + name + "}", quote(value, safe=""))
    headers: dict[str, str] = {}
    body: bytes | None = None
    kind = ep.body.kind
    if kind in (BodyKind.JSON, BodyKind.JSON_LIST) or draw(st.booleans()):
        if kind is BodyKind.JSON and ep.body.model and draw(st.booleans()):
            fields = list(BY_NAME_FIELDS.get(ep.body.model, ()))
            value: Any = {f: draw(json_values) for f in fields if draw(st.booleans())}
        else:
            value = draw(json_values)
        body = draw(st.sampled_from([json.dumps(value).encode(), b"{", b"[" * 300 + b"]" * 300,
                                     json.dumps(value).encode()]))
        headers["Content-Type"] = "application/json"
    elif kind in (BodyKind.TEXT, BodyKind.FORM):
        body = draw(text).encode("utf-8", "surrogatepass")
        headers["Content-Type"] = "text/plain" if kind is BodyKind.TEXT else "application/x-www-form-urlencoded"
    elif kind is BodyKind.MULTIPART:
        body = b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + draw(text).encode(
            "utf-8", "replace") + b"\"\r\n\r\nxx\r\n--B--\r\n"
        headers["Content-Type"] = draw(st.sampled_from(["multipart/form-data; boundary=B", "multipart/form-data"]))
    who = draw(st.sampled_from(["owner", "admin", "none", "bogus"]))
    return {"path": path, "query": query, "headers": headers, "body": body, "who": who}


def _model_fields() -> dict[str, tuple[str, ...]]:
    from wasdi_sdk.models import MODELS

    return {name: tuple(f.alias or key for key, f in cls.model_fields.items()) for name, cls in MODELS.items()}


BY_NAME_FIELDS = _model_fields()


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    server = Server(Path(tmp_path_factory.mktemp("fuzz")) / "data")
    server.services.launcher.stop()  # the answers are under test, not what queued work does later
    server.add_user("owner@example.org")
    server.add_user("root@example.org", admin=True)
    yield server
    server.close()


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
    if kind is ResponseKind.MODEL and model and isinstance(parsed, dict):
        MODELS[model].model_validate(parsed)
    elif kind is ResponseKind.MODEL_LIST and model:
        assert isinstance(parsed, list), f"{where}: not a list: {str(parsed)[:200]}"
        for item in parsed:
            MODELS[model].model_validate(item)
    elif kind is ResponseKind.STRING_LIST:
        assert isinstance(parsed, list) and all(isinstance(v, str) for v in parsed), f"{where}: {str(parsed)[:200]}"


@pytest.mark.parametrize("name", ROUTED)
def test_fuzz_endpoint(fuzz_server: Server, name: str) -> None:
    ep = BY_NAME[name]
    tokens = {"owner": fuzz_server.services.sessions.open("owner@example.org"),
              "admin": fuzz_server.services.sessions.open("root@example.org"), "bogus": "bogus-token"}

    @settings(max_examples=EXAMPLES, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(request=requests(ep))
    def run(request: dict[str, Any]) -> None:
        headers = dict(request["headers"])
        token = tokens.get(request["who"])
        if token:
            headers["x-session-token"] = token
        result = fuzz_server.http.simulate_request(ep.method, request["path"], params=request["query"] or None,
                                                   headers=headers, body=request["body"])
        check_answer(ep, result.status_code, result.content, result.headers.get("content-type") or "")

    run()
