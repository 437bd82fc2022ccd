"""The OpenAPI 3.1 document of this server, generated from the endpoint catalogue and the models.

Served at ``GET /openapi.json`` without a session.  Each operation carries its failure style as
``x-wasdi-failure-style`` (A: a status with ``ErrorResponse``; B: HTTP 200 with a marker in the body;
C: HTTP 200 with null, empty, default or -1) and ``x-wasdi-failure`` (what a failed call carries), so
tools and the fuzz test know what a failure must look like.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable
from typing import Any

import falcon
from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, models_json_schema

from wasdi_sdk.catalog import Auth, BodyKind, Endpoint, Param, ParamType, ResponseKind, Style
from wasdi_sdk.models import MODELS

ROUTE = "/openapi.json"
SESSION_SCHEME = "session"
TOKEN_SCHEME = "token"
REF = "#/components/schemas/{model}"

_PARAM_SCHEMAS: dict[ParamType, dict[str, Any]] = {
    ParamType.STR: {"type": "string"},
    ParamType.INT: {"type": "integer"},
    ParamType.FLOAT: {"type": "number"},
    ParamType.BOOL: {"type": "boolean"},
    ParamType.STR_LIST: {"type": "array", "items": {"type": "string"}},
}


def ref(model: str) -> dict[str, Any]:
    return {"$ref": REF.format(model=model)}


def param_schema(param: Param) -> dict[str, Any]:
    schema = dict(_PARAM_SCHEMAS[param.type])
    if param.json:
        schema["contentMediaType"] = "application/json"  # a JSON text (JSON Schema 2020-12, OpenAPI 3.1)
    if param.default is not None:
        schema["default"] = param.default
    return schema


def parameters(ep: Endpoint) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
                                 for name in ep.path_params]
    for param in ep.query:
        entry: dict[str, Any] = {"name": param.name, "in": "query", "required": param.required,
                                 "schema": param_schema(param)}
        if param.type is ParamType.STR_LIST:
            entry.update(style="form", explode=False)
        if param.doc:
            entry["description"] = param.doc
        out.append(entry)
    return out


def request_body(ep: Endpoint) -> dict[str, Any] | None:
    body = ep.body
    if body.kind is BodyKind.NONE:
        return None
    if body.kind is BodyKind.JSON:
        content = {"application/json": {"schema": ref(body.model or "")}}
    elif body.kind is BodyKind.JSON_LIST:
        content = {"application/json": {"schema": {"type": "array", "items": {}}}}
    elif body.kind is BodyKind.TEXT:
        text: dict[str, Any] = {"type": "string"}
        if body.json_text:
            text["contentMediaType"] = "application/json"
        content = {"text/plain": {"schema": text}}
    elif body.kind is BodyKind.MULTIPART:
        field = body.field or "file"
        content = {"multipart/form-data": {"schema": {
            "type": "object", "properties": {field: {"type": "string", "contentMediaType": "application/octet-stream"}},
            "required": [field]}}}
    else:
        content = {"application/x-www-form-urlencoded": {"schema": {"type": "object",
                                                                    "additionalProperties": {"type": "string"}}}}
    return {"required": body.required, "content": content}


def success_content(ep: Endpoint) -> dict[str, Any] | None:
    response = ep.response
    kind = response.kind
    if kind is ResponseKind.EMPTY:
        return None
    if kind is ResponseKind.MODEL:
        schema: dict[str, Any] = ref(response.model or "")
    elif kind is ResponseKind.MODEL_LIST:
        schema = {"type": "array", "items": ref(response.model or "")}
    elif kind is ResponseKind.STRING_LIST:
        schema = {"type": "array", "items": {"type": "string"}}
    elif kind is ResponseKind.BOOL:
        schema = {"type": "boolean"}
    elif kind is ResponseKind.INT:
        schema = {"type": "integer"}
    elif kind is ResponseKind.FLOAT:
        schema = {"type": "number"}
    elif kind is ResponseKind.BYTES:
        return {response.media_type or "application/octet-stream": {"schema": {
            "type": "string", "contentMediaType": response.media_type or "application/octet-stream"}}}
    elif kind in (ResponseKind.TEXT, ResponseKind.HTML):
        return {response.media_type: {"schema": {"type": "string"}}}
    else:
        schema = {}
    if ep.style is not Style.STATUS:
        # Styles B and C also answer failures with HTTP 200: null is one of them.
        schema = {"anyOf": [schema, {"type": "null"}]} if schema else schema
    return {"application/json": {"schema": schema}}


def responses(ep: Endpoint) -> dict[str, Any]:
    ok: dict[str, Any] = {"description": "Success" + ("" if ep.style is Style.STATUS
                                                      else ", or a failure in the endpoint's style")}
    content = success_content(ep)
    if content:
        ok["content"] = content
    out: dict[str, Any] = {"200": ok}
    if ep.style is Style.STATUS:
        for status in ep.statuses:
            if status >= 300 and status not in (304,):
                out[str(status)] = {"description": "Failure",
                                    "content": {"application/json": {"schema": ref("ErrorResponse")}}}
            elif status in (204, 304):
                out[str(status)] = {"description": "No content"}
    elif ep.failure.kind.value == "primitive_with_status":
        for status in ep.statuses:
            if status != 200:
                out[str(status)] = {"description": "Failure (intValue carries the same status)",
                                    "content": {"application/json": {"schema": ref("PrimitiveResult")}}}
    return out


def operation(ep: Endpoint) -> dict[str, Any]:
    op: dict[str, Any] = {"operationId": ep.name, "tags": [ep.group], "summary": ep.summary or ep.name,
                          "parameters": parameters(ep), "responses": responses(ep),
                          "x-wasdi-failure-style": ep.style.value, "x-wasdi-failure": ep.failure.kind.value}
    if ep.auth is Auth.PUBLIC:
        op["security"] = []
    elif ep.auth is Auth.TOKEN:
        op["security"] = [{SESSION_SCHEME: []}, {TOKEN_SCHEME: []}]
    body = request_body(ep)
    if body:
        op["requestBody"] = body
    if ep.admin:
        op["x-wasdi-admin"] = True
    return op


def component_schemas() -> dict[str, Any]:
    pairs: list[tuple[type[BaseModel], JsonSchemaMode]] = [(cls, "serialization") for cls in MODELS.values()]
    _, defs = models_json_schema(pairs, by_alias=True, ref_template=REF)
    schemas: dict[str, Any] = dict(defs.get("$defs", {}))
    for name, cls in MODELS.items():
        if name not in schemas and cls.__name__ in schemas:
            schemas[name] = ref(cls.__name__)
    return schemas


def build_document(endpoints: Iterable[Endpoint], *, version: str = "", server_url: str = "") -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``endpoints``."""
    paths: dict[str, dict[str, Any]] = {}
    for ep in sorted(endpoints, key=lambda e: (e.path, e.method)):
        paths.setdefault(ep.path, {})[ep.method.lower()] = operation(ep)
    doc: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "WASDI", "version": version or "0",
                 "description": "The WASDI service as this server implements it (wasdi-toolkit)."},
        "paths": paths,
        "components": {
            "schemas": component_schemas(),
            "securitySchemes": {
                SESSION_SCHEME: {"type": "apiKey", "in": "header", "name": "x-session-token"},
                TOKEN_SCHEME: {"type": "apiKey", "in": "query", "name": "token"},
            },
        },
        "security": [{SESSION_SCHEME: []}],
    }
    if server_url:
        doc["servers"] = [{"url": server_url}]
    return doc


def served_endpoints() -> list[Endpoint]:
    """The catalogue endpoints this server routes (a handler is registered)."""
    from wasdi_sdk.catalog import BY_NAME

    from .framework import HANDLERS

    return [BY_NAME[name] for name in HANDLERS]


def server_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("wasdi-toolkit")
    except PackageNotFoundError:
        return "0"


class OpenAPIDocument:
    """``GET /openapi.json``: public (no session), generated once and kept."""

    def __init__(self) -> None:
        self._body: bytes | None = None
        self._lock = threading.Lock()

    def body(self) -> bytes:
        with self._lock:
            if self._body is None:
                document = build_document(served_endpoints(), version=server_version())
                self._body = json.dumps(document, separators=(",", ":")).encode("utf-8")
            return self._body

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = "application/json"
        resp.data = self.body()
