"""The vocabulary of the endpoint catalogue.

Every endpoint of the service contract is described once, as data, with these types.  The SDK
builds its requests and recognises failures from them, the server routes, authenticates,
parses parameters and answers failures from them, and the tests check both against them.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


class Style(enum.Enum):
    """How an endpoint signals failure (contract, "Errors")."""

    STATUS = "A"
    """An HTTP status code; the body is an ``ErrorResponse {message}``."""
    MARKER = "B"
    """HTTP 200 with a failure marker inside the body."""
    EMPTY = "C"
    """HTTP 200 with a null, empty, default or -1 body."""


class Auth(enum.Enum):
    """What an endpoint needs from the caller."""

    SESSION = "session"
    """The ``x-session-token`` header."""
    TOKEN = "token"
    """The header, or the ``token`` query parameter (browser-friendly downloads)."""
    PUBLIC = "public"
    """Nothing; a header, when sent, is not checked."""


class ParamType(enum.Enum):
    STR = "str"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    STR_LIST = "str_list"
    """A comma separated list, or the parameter repeated."""


@dataclass(frozen=True)
class Param:
    """One query parameter, under its exact wire name."""

    name: str
    type: ParamType = ParamType.STR
    required: bool = False
    default: Any = None
    doc: str = ""
    python: str = ""
    """The SDK's argument name when the snake-case wire name would clash (e.g. with the ``timeout`` option)."""
    json: bool = False
    """The value is a JSON text the server parses (sample or run parameters)."""

    @property
    def python_name(self) -> str:
        return self.python or to_snake(self.name)


class BodyKind(enum.Enum):
    NONE = "none"
    JSON = "json"
    """A JSON document validated against ``Body.model`` (a list of it when ``many``)."""
    JSON_LIST = "json_list"
    """A JSON array of plain values (ids, names, query strings)."""
    TEXT = "text"
    """A plain-text body (an e-mail address, a log line, a payload string)."""
    MULTIPART = "multipart"
    """``multipart/form-data`` with a file part named ``Body.field``."""
    FORM = "form"
    """``application/x-www-form-urlencoded`` fields."""


@dataclass(frozen=True)
class Body:
    kind: BodyKind
    model: str | None = None
    field: str | None = None
    required: bool = True
    json_text: bool = False
    """A ``TEXT`` body that is a JSON text the server parses (run parameters, a UI descriptor)."""
    json_fields: tuple[str, ...] = ()
    """String fields of a ``JSON`` body's model that hold JSON texts the server parses (wire names)."""


NO_BODY = Body(BodyKind.NONE, required=False)


class ResponseKind(enum.Enum):
    EMPTY = "empty"
    """No body on success."""
    MODEL = "model"
    MODEL_LIST = "model_list"
    STRING_LIST = "string_list"
    TEXT = "text"
    """A bare text body (``text/plain`` or XML)."""
    BOOL = "bool"
    INT = "int"
    FLOAT = "float"
    BYTES = "bytes"
    """A binary download (images, zips, attachments)."""
    JSON = "json"
    """Free JSON (maps whose keys are data)."""
    HTML = "html"


@dataclass(frozen=True)
class Response:
    kind: ResponseKind
    model: str | None = None
    media_type: str = "application/json"


class FailureKind(enum.Enum):
    """What a failed call carries in the body (styles B and C)."""

    ERROR_RESPONSE = "error_response"
    """Style A: the status code, with ``ErrorResponse {message}``."""
    PRIMITIVE = "primitive"
    """``PrimitiveResult`` with ``boolValue=false`` and the status in ``intValue``."""
    PRIMITIVE_WITH_STATUS = "primitive_with_status"
    """As ``PRIMITIVE``, and the HTTP status equals ``intValue`` (register, lostPassword)."""
    INVALID_USER = "invalid_user"
    """``UserViewModel`` with an empty ``userId`` (and ``boolValue=false`` on login)."""
    NULL = "null"
    EMPTY_LIST = "empty_list"
    DEFAULT_MODEL = "default_model"
    """The response model with no identity (its ``id_field`` empty)."""
    TEXT_ERROR = "text_error"
    """The bare text ``ERROR``."""
    MINUS_ONE = "minus_one"
    FALSE = "false"
    RUNNING_ERROR = "running_error"
    """A ``RunningProcessorViewModel`` with ``status=ERROR``."""


@dataclass(frozen=True)
class Failure:
    kind: FailureKind
    id_field: str | None = None
    """For ``DEFAULT_MODEL`` / ``INVALID_USER``: the field that is empty on failure."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Fields a failure body carries besides the marker (e.g. ``status=ERROR``)."""
    meaning: int | None = None
    """The status a client should read into a marker that carries none (a failed login is 401)."""
    session_failure: FailureKind | None = None
    """What an invalid session gives when it differs from other failures (``/ws/getws``: null)."""


@dataclass(frozen=True)
class Endpoint:
    """One endpoint of the contract."""

    name: str
    """``<group>.<operation>``: the SDK method is ``client.<group>.<operation>``."""
    method: str
    path: str
    """Relative to the base URL, with ``{name}`` path parameters."""
    style: Style
    failure: Failure
    auth: Auth = Auth.SESSION
    query: tuple[Param, ...] = ()
    body: Body = NO_BODY
    response: Response = field(default_factory=lambda: Response(ResponseKind.EMPTY))
    admin: bool = False
    summary: str = ""
    statuses: tuple[int, ...] = (200,)
    """HTTP statuses the contract lists (style A) or the ``intValue`` codes (style B)."""
    idempotent: bool | None = None
    """Safe to retry; defaults to ``method == GET`` with no side effects declared."""
    mutates: bool = False
    contract: bool = True
    """False for the calls real clients make that the contract does not list (the /catalog file calls)."""

    @property
    def group(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def operation(self) -> str:
        return self.name.split(".", 1)[1]

    @property
    def base(self) -> str:
        return "/" + self.path.strip("/").split("/", 1)[0]

    @property
    def path_params(self) -> tuple[str, ...]:
        out = []
        for part in self.path.split("/"):
            if part.startswith("{") and part.endswith("}"):
                out.append(part[1:-1])
        return tuple(out)

    @property
    def retry_safe(self) -> bool:
        if self.idempotent is not None:
            return self.idempotent
        return self.method in ("GET", "HEAD") and not self.mutates

    def param(self, name: str) -> Param:
        for p in self.query:
            if p.name == name:
                return p
        raise KeyError(name)


def to_snake(name: str) -> str:
    """``workspaceId`` -> ``workspace_id``; ``CHECKOUT_SESSION_ID`` -> ``checkout_session_id``."""
    if name.isupper():
        return name.lower()
    out: list[str] = []
    for i, ch in enumerate(name):
        if ch.isupper() and i > 0 and (not name[i - 1].isupper() or (i + 1 < len(name) and name[i + 1].islower())):
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


# Short constructors keep the catalogue tables readable.
def q(name: str, type: ParamType = ParamType.STR, *, required: bool = False, default: Any = None,
      doc: str = "") -> Param:
    return Param(name, type, required, default, doc)


def qreq(name: str, type: ParamType = ParamType.STR, doc: str = "") -> Param:
    return Param(name, type, True, None, doc)


def qbool(name: str, default: bool | None = None, doc: str = "") -> Param:
    return Param(name, ParamType.BOOL, False, default, doc)


def qint(name: str, default: int | None = None, *, required: bool = False, doc: str = "") -> Param:
    return Param(name, ParamType.INT, required, default, doc)


def qjson(name: str, doc: str = "") -> Param:
    """An optional query parameter holding a JSON text."""
    return Param(name, ParamType.STR, False, None, doc, json=True)


def json_body(model: str, required: bool = True, json_fields: tuple[str, ...] = ()) -> Body:
    return Body(BodyKind.JSON, model=model, required=required, json_fields=json_fields)


def list_body() -> Body:
    return Body(BodyKind.JSON_LIST)


def text_body(required: bool = True, *, json_text: bool = False) -> Body:
    return Body(BodyKind.TEXT, required=required, json_text=json_text)


def multipart(field_name: str = "file") -> Body:
    return Body(BodyKind.MULTIPART, field=field_name)


def form(field_name: str) -> Body:
    return Body(BodyKind.FORM, field=field_name)


def model(name: str) -> Response:
    return Response(ResponseKind.MODEL, name)


def models(name: str) -> Response:
    return Response(ResponseKind.MODEL_LIST, name)


EMPTY = Response(ResponseKind.EMPTY)
TEXT = Response(ResponseKind.TEXT, media_type="text/plain")
XML = Response(ResponseKind.TEXT, media_type="application/xml")
BYTES = Response(ResponseKind.BYTES, media_type="application/octet-stream")
BOOL = Response(ResponseKind.BOOL)
INT = Response(ResponseKind.INT)
FLOAT = Response(ResponseKind.FLOAT)
STRINGS = Response(ResponseKind.STRING_LIST)
JSON = Response(ResponseKind.JSON)
HTML = Response(ResponseKind.HTML, media_type="text/html")
PRIMITIVE = model("PrimitiveResult")
STRING_RESULT = model("StringResult")
"""A PrimitiveResult whose stringValue the contract always fills on success (an id, a text)."""
SUCCESS = model("SuccessResponse")

# Failure descriptors in common use.
A = Failure(FailureKind.ERROR_RESPONSE)
B_PRIMITIVE = Failure(FailureKind.PRIMITIVE)
B_PRIMITIVE_STATUS = Failure(FailureKind.PRIMITIVE_WITH_STATUS)
B_USER = Failure(FailureKind.INVALID_USER, id_field="userId", meaning=401)
B_USER_INPUT = Failure(FailureKind.INVALID_USER, id_field="userId", meaning=400)
C_NULL = Failure(FailureKind.NULL)
C_EMPTY_LIST = Failure(FailureKind.EMPTY_LIST)
C_TEXT_ERROR = Failure(FailureKind.TEXT_ERROR)
C_MINUS_ONE = Failure(FailureKind.MINUS_ONE)
C_FALSE = Failure(FailureKind.FALSE)
C_USER = Failure(FailureKind.INVALID_USER, id_field="userId", meaning=401)


def c_default(id_field: str, *, session_failure: FailureKind | None = None, **defaults: Any) -> Failure:
    return Failure(FailureKind.DEFAULT_MODEL, id_field=id_field, defaults=defaults, session_failure=session_failure)
