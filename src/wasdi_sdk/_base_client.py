"""Transport, retries and the mapping of the three failure styles to exceptions.

Resource modules stay declarative: they name a catalogue endpoint and pass its arguments;
everything about building the request and reading the answer happens here, once.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import IO, Any
from urllib.parse import quote

import httpx

from . import _exceptions as exc
from .catalog import Auth, BodyKind, Endpoint, FailureKind, ParamType, ResponseKind, Style, endpoint
from .catalog.placement import PROCESS_NODE, WORKSPACE_NODE

# The models (pydantic classes: building them is most of the SDK's import time) are imported on the first call
# that sends or reads one, so `from wasdi_sdk import WasdiClient` costs little more than httpx (bench/startup.py).

DEFAULT_BASE_URL = "https://www.wasdi.net/wasdiwebserver/rest"
DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_RETRIES = 2
SESSION_HEADER = "x-session-token"
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
MAIN_NODE = "wasdi"
LOG_IN_FIRST = ("call client.auth.login(user, password) first (or give the client session_token=..., or make it "
                "with from_config())")
CLIENT_GROUPS = {"processors": "apps"}
"""The client's name of a catalogue group where the two differ (``client.apps`` is the processors group)."""
MAX_REMEMBERED = 10_000
"""Workspace and process addresses kept per client (the oldest forgotten first)."""

QueryValue = str | int | float | bool | list[str] | None
FileInput = IO[bytes] | bytes | tuple[str, IO[bytes] | bytes]


@dataclass
class RawResponse:
    """The HTTP response of a call made through ``with_raw_response``; ``parse()`` gives the result."""

    http_response: httpx.Response
    _parse: Callable[[], Any]

    @property
    def status_code(self) -> int:
        return self.http_response.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.http_response.headers

    def parse(self) -> Any:
        return self._parse()


def encode_query_value(param_type: ParamType, value: Any) -> str:
    """A query value as the service reads it (booleans ``true``/``false``, lists comma separated)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if param_type is ParamType.STR_LIST and isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


class BaseClient:
    """Holds the HTTP client and the session; turns catalogue calls into requests and results."""

    def __init__(self, *, base_url: str | None = None, session_token: str | None = None,
                 timeout: float | httpx.Timeout | None = None, max_retries: int = DEFAULT_MAX_RETRIES,
                 http_client: httpx.Client | None = None, default_headers: Mapping[str, str] | None = None) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.session_token = session_token
        self.timeout: float | httpx.Timeout = DEFAULT_TIMEOUT if timeout is None else timeout
        self.max_retries = max(0, max_retries)
        self._owns_http_client = http_client is None
        self._http = http_client or httpx.Client(timeout=self.timeout)
        self._default_headers = dict(default_headers or {})
        self._workspace_urls: dict[str, str] = {}
        self._process_urls: dict[str, str] = {}

    # -- where a call goes -----------------------------------------------------------------
    def workspace_url(self, workspace_id: str) -> str:
        """The base URL of the node that holds ``workspace_id`` (its ``apiUrl``; the configured base URL for the
        main node's workspaces, or when it cannot be read), asked once per workspace."""
        known = self._workspace_urls.get(workspace_id)
        if known is not None:
            return known
        url = self.base_url
        try:
            editor = self.call("workspaces.get", query={"workspace": workspace_id})
        except exc.WasdiError:
            return url  # the call itself then answers why (no such workspace, no rights ...)
        api_url = str(getattr(editor, "api_url", "") or "").rstrip("/")
        if api_url and getattr(editor, "node_code", None) not in (None, "", MAIN_NODE):
            url = api_url
        return self._remember(self._workspace_urls, workspace_id, url)

    @staticmethod
    def _remember(memory: dict[str, str], key: str, url: str) -> str:
        memory[key] = url
        if len(memory) > MAX_REMEMBERED:
            memory.pop(next(iter(memory)))
        return url

    def _base_for(self, ep: Endpoint, query: Mapping[str, Any], body: Any) -> str:
        """Where ``ep`` runs: the node of the workspace or process it names (``catalog.placement``), else the
        configured base URL, as the official library and the web client send them."""
        places = WORKSPACE_NODE.get(ep.name)
        for place in places or ():
            if place.startswith("body:"):
                from .models import WasdiModel

                wire = body.to_wire() if isinstance(body, WasdiModel) else body
                value = wire.get(place.removeprefix("body:")) if isinstance(wire, dict) else None
            else:
                value = query.get(place)
            if value:
                return self.workspace_url(str(value))
        process_param = PROCESS_NODE.get(ep.name)
        if process_param and query.get(process_param):
            return self._process_urls.get(str(query[process_param]), self.base_url)
        return self.base_url

    def _learn(self, ep: Endpoint, base: str, result: Any) -> None:
        """Remember the node of the processes a node's answer names, for the calls about them that follow."""
        if base == self.base_url or ep.name not in WORKSPACE_NODE:
            return
        for item in result if isinstance(result, list) else [result]:
            for name in ("process_id", "string_value"):
                value = getattr(item, name, None)
                if isinstance(value, str) and value and value not in ("DONE", "ERROR"):
                    self._remember(self._process_urls, value, base)

    # -- lifecycle -------------------------------------------------------------------------
    def close(self) -> None:
        """Close the HTTP client if this client created it."""
        if self._owns_http_client:
            self._http.close()

    # -- requests --------------------------------------------------------------------------
    def build_request(self, ep: Endpoint, *, query: Mapping[str, Any] | None = None,
                      path: Mapping[str, str] | None = None, body: Any = None,
                      files: Mapping[str, FileInput] | None = None,
                      extra_headers: Mapping[str, str] | None = None,
                      extra_query: Mapping[str, Any] | None = None,
                      timeout: float | httpx.Timeout | None = None, base: str | None = None) -> httpx.Request:
        """The ``httpx.Request`` for calling ``ep`` with these arguments (at ``base``: where ``ep`` runs)."""
        url_path = ep.path
        for name in ep.path_params:
            value = (path or {}).get(name)
            if not value:
                raise exc.BadRequestError(f"missing path parameter {name}", endpoint=ep.name)
            url_path = url_path.replace("{" + name + "}", quote(str(value), safe=""))
        params: list[tuple[str, str | int | float | bool | None]] = []
        given = dict(query or {})
        for p in ep.query:
            value = given.pop(p.name, None)
            if value is None:
                if p.required:
                    raise exc.BadRequestError(f"missing required parameter {p.name}", endpoint=ep.name)
                continue
            params.append((p.name, encode_query_value(p.type, value)))
        for name, value in {**given, **(extra_query or {})}.items():
            if value is not None:
                params.append((name, encode_query_value(ParamType.STR, value)))
        headers = dict(self._default_headers)
        if self.session_token and ep.auth is not Auth.PUBLIC:
            headers[SESSION_HEADER] = self.session_token
        elif ep.auth is not Auth.PUBLIC and not self._has_credentials(headers, extra_headers, extra_query):
            raise exc.NotLoggedInError(f"not logged in: {describe_call(ep, dict(query or {}))} needs a session; "
                                       f"{LOG_IN_FIRST}", endpoint=ep.name)
        content: bytes | None = None
        data: dict[str, str] | None = None
        send_files: dict[str, Any] | None = None
        kind = ep.body.kind
        if kind is BodyKind.JSON or kind is BodyKind.JSON_LIST:
            if body is not None or ep.body.required:
                from .models import WasdiModel

                payload = body.to_wire() if isinstance(body, WasdiModel) else body
                content = json.dumps(payload).encode()
                headers["Content-Type"] = "application/json"
        elif kind is BodyKind.TEXT:
            if body is not None:
                content = body.encode() if isinstance(body, str) else bytes(body)
                headers["Content-Type"] = "text/plain; charset=utf-8"
        elif kind is BodyKind.FORM:
            data = {str(k): str(v) for k, v in (body or {}).items()}
        elif kind is BodyKind.MULTIPART:
            send_files = dict(files or {})
        headers.update(extra_headers or {})
        base = base or self._base_for(ep, dict(query or {}), body)
        return self._http.build_request(
            ep.method, base + url_path, params=params, headers=headers, content=content,
            data=data, files=send_files, timeout=self.timeout if timeout is None else timeout)

    def _has_credentials(self, headers: Mapping[str, str], extra_headers: Mapping[str, str] | None,
                         extra_query: Mapping[str, Any] | None) -> bool:
        """Whether a request carries a session some other way than ``session_token``: a header the caller set
        (here or on their own ``http_client``), a ``token`` query parameter, or the HTTP client's cookies."""
        given = {name.lower() for name in [*headers, *(extra_headers or {}), *self._http.headers]}
        return SESSION_HEADER in given or bool((extra_query or {}).get("token")) or bool(self._http.cookies)

    def send(self, ep: Endpoint, request: httpx.Request, *, stream: bool = False) -> httpx.Response:
        """Send with retries where that is safe: connection errors, 408/429/5xx, idempotent calls."""
        attempts = 1 + (self.max_retries if ep.retry_safe and request.headers.get("content-type", "")
                        .find("multipart") < 0 else 0)
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                response = self._http.send(request, stream=stream)
            except httpx.TimeoutException as e:
                if last:
                    raise exc.APITimeoutError(f"{ep.method} {ep.path} timed out") from e
            except httpx.TransportError as e:
                if last:
                    where = f"{request.url.scheme}://{request.url.netloc.decode()}"
                    raise exc.APIConnectionError(f"cannot reach {where}: {e}") from e
            else:
                if response.status_code not in RETRY_STATUSES or last:
                    return response
                response.close()
            time.sleep(self._backoff(attempt))
        raise AssertionError("unreachable")

    @staticmethod
    def _backoff(attempt: int) -> float:
        return float(min(8.0, 0.5 * 2 ** attempt) * (0.75 + random.random() / 2))

    def call(self, name: str, *, query: Mapping[str, Any] | None = None, path: Mapping[str, str] | None = None,
             body: Any = None, files: Mapping[str, FileInput] | None = None, raw: bool = False,
             extra_headers: Mapping[str, str] | None = None, extra_query: Mapping[str, Any] | None = None,
             timeout: float | httpx.Timeout | None = None) -> Any:
        """Call the catalogue endpoint ``name`` and return its parsed result (or raise)."""
        ep = endpoint(name)
        base = self._base_for(ep, dict(query or {}), body)
        request = self.build_request(ep, query=query, path=path, body=body, files=files,
                                     extra_headers=extra_headers, extra_query=extra_query, timeout=timeout, base=base)
        response = self.send(ep, request)
        if raw:
            return RawResponse(response, lambda: parse_response(ep, response))
        result = parse_response(ep, response)
        self._learn(ep, base, result)
        return result

    def stream(self, name: str, *, query: Mapping[str, Any] | None = None,
               extra_headers: Mapping[str, str] | None = None, extra_query: Mapping[str, Any] | None = None,
               timeout: float | httpx.Timeout | None = None) -> httpx.Response:
        """Open a streamed download; the caller must close the response.  Failures raise."""
        ep = endpoint(name)
        request = self.build_request(ep, query=query, extra_headers=extra_headers, extra_query=extra_query,
                                     timeout=timeout)
        response = self.send(ep, request, stream=True)
        if response.status_code != 200:
            response.read()
            response.close()
            parse_response(ep, response)
        return response


# -- reading answers -------------------------------------------------------------------------
def describe_call(ep: Endpoint, arguments: Mapping[str, Any]) -> str:
    """``client.workspaces.get(workspace='no-such-id')``: the call as its user wrote it (query arguments only)."""
    shown = ", ".join(f"{p.python_name}={arguments[p.name]!r}" for p in ep.query if arguments.get(p.name) is not None)
    return f"client.{CLIENT_GROUPS.get(ep.group, ep.group)}.{ep.operation}({shown})"


def _called(ep: Endpoint, response: httpx.Response) -> str:
    try:
        params = response.request.url.params
    except RuntimeError:  # a response built by hand, with no request
        return describe_call(ep, {})
    return describe_call(ep, {name: params.get(name) for name in params})


def _nothing(ep: Endpoint, response: httpx.Response, what: str, body: Any) -> None:
    """The style-C answer ``what`` (null, -1, a model with no id): for a read of one thing named by the caller,
    ``UnknownIdError`` naming it; where the contract says null means a bad session, ``AuthenticationError``;
    else ``EmptyResultError``.  Each message names the call and its arguments."""
    call = _called(ep, response)
    if body is None and ep.failure.session_failure is FailureKind.NULL:
        _raise(exc.AuthenticationError, f"{call}: the session is not valid any more (the service answered null): "
               "log in again", ep, response, Style.EMPTY, None, body)
    named = [p for p in ep.query if p.required]
    if not ep.mutates and ep.response.kind is ResponseKind.MODEL and named:
        try:
            given = response.request.url.params.get(named[0].name)
        except RuntimeError:
            given = None
        _raise(exc.UnknownIdError, f"nothing for {named[0].python_name}={given!r}: it does not exist, or this user "
               f"may not read it ({call} answered {what})", ep, response, Style.EMPTY, None, body)
    _raise(exc.EmptyResultError, f"{call} answered {what}", ep, response, Style.EMPTY, None, body)


def _decode_json(ep: Endpoint, response: httpx.Response) -> Any:
    text = response.text
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError as e:
        raise exc.UnexpectedResponseError(f"the answer is not JSON: {text[:200]!r}", style=ep.style,
                                          status=response.status_code, body=text, response=response,
                                          endpoint=ep.name) from e


def _raise(cls: type[exc.APIError], message: str, ep: Endpoint, response: httpx.Response, style: Style,
           status: int | None, body: Any) -> None:
    raise cls(message, style=style, status=status, body=body, response=response, endpoint=ep.name)


def _status_failure(ep: Endpoint, response: httpx.Response) -> None:
    status = response.status_code
    body: Any
    try:
        body = response.json() if response.content else None
    except ValueError:
        body = response.text
    message = ""
    if isinstance(body, dict):
        message = str(body.get("message") or body.get("stringValue") or "")
    elif isinstance(body, str):
        message = body[:500]
    style = Style.STATUS if ep.style is Style.STATUS else ep.style
    _raise(exc.error_class_for(status), message or response.reason_phrase or "request failed", ep, response,
           style, status, body)


def _primitive_failure(ep: Endpoint, response: httpx.Response, body: Any) -> None:
    if isinstance(body, dict) and body.get("boolValue", body.get("BoolValue")) is False:
        code = body.get("intValue", body.get("IntValue"))
        code = code if isinstance(code, int) and code >= 100 else ep.failure.meaning
        message = str(body.get("stringValue") or body.get("StringValue") or "the service refused the request")
        _raise(exc.error_class_for(code), message, ep, response, Style.MARKER, code, body)


def parse_response(ep: Endpoint, response: httpx.Response) -> Any:
    """The result of ``ep`` read from ``response``, or the exception its failure style means."""
    status = response.status_code
    kind = ep.failure.kind
    if kind is FailureKind.PRIMITIVE_WITH_STATUS and status != 200:
        body = _decode_json(ep, response) if response.content else None
        _primitive_failure(ep, response, body)
    if status == 204 and ep.style is Style.EMPTY:
        # The original server answers 204 where the contract says "200 with null".
        _nothing(ep, response, "nothing (204)", None)
    if status == 204:
        if ep.response.kind is ResponseKind.EMPTY:
            return None
        _raise(exc.NoContentError, "the service has no content for this request", ep, response, ep.style, status,
               None)
    if not 200 <= status < 300:
        _status_failure(ep, response)
    rkind = ep.response.kind
    if rkind is ResponseKind.EMPTY:
        return None
    if rkind is ResponseKind.BYTES:
        return response.content
    if rkind in (ResponseKind.TEXT, ResponseKind.HTML):
        text = response.text
        content_type = response.headers.get("content-type", "")
        is_json_null = text.strip() == "null" and content_type.startswith("application/json")
        if kind is FailureKind.NULL and (not text or is_json_null):
            _nothing(ep, response, "null", text)
        return text
    body = _decode_json(ep, response)
    if kind in (FailureKind.PRIMITIVE, FailureKind.PRIMITIVE_WITH_STATUS):
        _primitive_failure(ep, response, body)
    if body is None:
        if rkind in (ResponseKind.MODEL_LIST, ResponseKind.STRING_LIST) and kind is FailureKind.EMPTY_LIST:
            return []
        _nothing(ep, response, "null", None)
    if kind is FailureKind.MINUS_ONE and body == -1:
        _nothing(ep, response, "-1", body)
    if rkind is ResponseKind.MODEL:
        if not isinstance(body, dict):
            _raise(exc.UnexpectedResponseError, f"expected an object, got {type(body).__name__}", ep, response,
                   ep.style, status, body)
        id_field = ep.failure.id_field
        if kind in (FailureKind.INVALID_USER, FailureKind.DEFAULT_MODEL) and id_field and not body.get(id_field):
            if ep.failure.meaning:
                _raise(exc.error_class_for(ep.failure.meaning), f"{_called(ep, response)} answered no {id_field}", ep,
                       response, ep.style, ep.failure.meaning, body)
            _nothing(ep, response, f"a {ep.response.model} with no {id_field}", body)
        if kind is FailureKind.RUNNING_ERROR and body.get("status") == "ERROR":
            from .messages import explain

            said, code = explain(str(body.get("message") or "the service refused the request"))
            raise exc.APIError(f"{said} ({_called(ep, response)})", style=ep.style, body=body, response=response,
                               endpoint=ep.name, code=code)
        return _read_model(ep, response, body)
    if rkind is ResponseKind.MODEL_LIST:
        if not isinstance(body, list):
            _raise(exc.UnexpectedResponseError, f"expected a list, got {type(body).__name__}", ep, response,
                   ep.style, status, body)
        return [_read_model(ep, response, item) for item in body]
    return body


def _read_model(ep: Endpoint, response: httpx.Response, item: Any) -> Any:
    """``item`` as the endpoint's model; a member the contract always sends missing is the server's fault."""
    from pydantic import ValidationError

    from .models import MODELS

    model_cls = MODELS[ep.response.model or ""]
    try:
        return model_cls.model_validate(item)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()[:3])
        _raise(exc.UnexpectedResponseError, f"the answer is not a valid {model_cls.__name__} ({problems})", ep,
               response, ep.style, response.status_code, item)
