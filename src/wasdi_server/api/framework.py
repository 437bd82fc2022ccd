"""Routing from the catalogue, and the one dispatcher every endpoint goes through.

A resource module declares handlers with ``@handles("<endpoint name>")``.  The dispatcher
authenticates the caller as the catalogue says, parses query parameters and the body, calls the
handler, and answers success or failure in the endpoint's style.  Handlers never touch falcon
responses or build failure bodies.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import falcon
from falcon import uri

from wasdi_sdk.catalog import BY_NAME, Auth, Endpoint, Param, ParamType

from ..domains.processes import run_scope
from ..errors import BadRequest, DomainError, ServerFailure, Unauthorized
from ..store import StoreUnavailableError, TextWithNulError
from .answer_cache import AnswerCache, answer_key
from .answers import Answer, failure, success
from .bodies import NUL_MESSAGE, has_nul, parse_body, read_limited, refuse_nul
from .host_header import canonical_prefix

if TYPE_CHECKING:
    from ..composition import Services
    from ..domains.accounts.identity import User

log = logging.getLogger("wasdi_server")

SESSION_HEADER = "x-session-token"
LEGACY_BASE_PATH = "/wasdiwebserver/rest"
"""The original server's API path; every route is served under it as well as at the root."""
TRUE_WORDS = frozenset({"true", "1", "yes", "on"})
FALSE_WORDS = frozenset({"false", "0", "no", "off"})


_UNREAD: Any = object()


@dataclass(slots=True)
class Call:
    """One parsed request, as a handler sees it."""

    endpoint: Endpoint
    services: Services
    request: falcon.Request
    user: User | None
    session_id: str | None
    params: dict[str, Any]
    path: dict[str, str]
    extra: dict[str, list[str]] = field(default_factory=dict)
    """Query parameters the catalogue does not declare (raw values)."""
    on_answer: list[Callable[[falcon.Response], None]] = field(default_factory=list)
    """What to add to the response besides the answer (a cookie), applied after it is written."""
    scope: dict[str, Any] | None = None
    """The scope of an app run's session (``services.run_scope``); ``None`` for a whole account."""
    _body: Any = field(default=_UNREAD, repr=False)
    raw_body: bytes | None = field(default=None, repr=False)
    """The body's bytes, when something read them before the handler (``body_json``)."""

    @property
    def body(self) -> Any:
        """The parsed body (``BadRequest`` if it is malformed, too large or nested too deeply).

        Parsed on the first read, so a handler's own checks (and the session check) come first.
        """
        if self._body is _UNREAD:
            settings = self.services.settings
            self._body = parse_body(self.endpoint, self.request, settings.max_json_body_bytes,
                                    settings.max_json_depth, self.raw_body)
        return self._body

    def body_json(self) -> Any:
        """The body as plain JSON (``None`` when it is not JSON), keeping its bytes for ``body`` and for a
        node this call may be forwarded to."""
        if self.raw_body is None:
            self.raw_body = read_limited(self.request, self.services.settings.max_json_body_bytes)
        try:
            data = json.loads(self.raw_body) if self.raw_body.strip() else None
        except ValueError:
            return None
        return refuse_nul(data)

    def as_sent(self, name: str) -> Any:
        """Parameter ``name`` as the client sent it, an empty value included (which the parsed ``params``
        read as absent): for fields where an empty value given on purpose clears what is stored."""
        sent = split_query(self.request.query_string).get(name)
        return sent[0] if sent else self.params[name]

    def if_none_match(self, etag: str) -> bool:
        """Whether the request's ``If-None-Match`` names ``etag`` (weak or strong) or is ``*``."""
        wanted = self.request.get_header("If-None-Match") or ""
        tags = {t.strip().removeprefix("W/") for t in wanted.split(",") if t.strip()}
        return etag in tags or "*" in tags

    @property
    def caller(self) -> User:
        """The authenticated user (the dispatcher guarantees one for session endpoints)."""
        if self.user is None:
            raise Unauthorized("MSG_ERROR_INVALID_SESSION")
        return self.user

    @property
    def base_url(self) -> str:
        """The public base URL of this server, as the caller reached it (or as configured)."""
        configured = self.services.settings.public_url
        if configured:
            return configured.rstrip("/")
        legacy = self.request.path.startswith(LEGACY_BASE_PATH + "/")
        return (canonical_prefix(self.request) + (LEGACY_BASE_PATH if legacy else "")).rstrip("/")


Handler = Callable[[Call], Any]
HANDLERS: dict[str, Handler] = {}
CACHED_BY: dict[str, tuple[str, ...]] = {}
"""Endpoints whose answers are cached, and the store collections those answers are derived from."""


def handles(name: str, *, cached_by: tuple[str, ...] = ()) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of catalogue endpoint ``name``.

    ``cached_by`` names every collection the answer is computed from: the answer is then reused for the
    same caller and query until one of them changes (hot, read-mostly listings that clients poll).
    """
    if name not in BY_NAME:
        raise KeyError(f"{name} is not in the catalogue")
    if cached_by and BY_NAME[name].mutates:
        raise ValueError(f"{name} changes state: its answers cannot be cached")

    def register(func: Handler) -> Handler:
        if name in HANDLERS:
            raise ValueError(f"two handlers for {name}")
        HANDLERS[name] = func
        if cached_by:
            CACHED_BY[name] = cached_by
        return func

    return register


# -- query parameters --------------------------------------------------------------------------
def parse_bool(value: str) -> bool:
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise BadRequest(f"not a boolean: {value[:40]!r}")


def parse_param(param: Param, values: list[str], max_length: int) -> Any:
    """The typed value of ``param`` from its raw occurrences in the query string."""
    present = [v for v in values if v != ""]
    if any(len(v) > max_length for v in values):
        raise BadRequest(f"parameter {param.name} is too long")
    if not present:
        if param.required:
            raise BadRequest(f"missing parameter {param.name}")
        return param.default
    first = present[0]
    try:
        if param.type is ParamType.BOOL:
            return parse_bool(first)
        if param.type is ParamType.INT:
            return int(first.strip())
        if param.type is ParamType.FLOAT:
            return float(first.strip())
    except ValueError as e:
        raise BadRequest(f"parameter {param.name} is not a valid {param.type.value}: {first[:40]!r}") from e
    if param.type is ParamType.STR_LIST:
        return [item.strip() for v in present for item in v.split(",") if item.strip()]
    return first


def split_query(query_string: str) -> dict[str, list[str]]:
    """Every query parameter with all its occurrences, in order (repeated parameters are kept)."""
    if not query_string:
        return {}
    raw = uri.parse_query_string(query_string, keep_blank=True, csv=False)
    return {k: (v if isinstance(v, list) else [v]) for k, v in raw.items()}


def parse_query(ep: Endpoint, occurrences: dict[str, list[str]], max_length: int) -> dict[str, Any]:
    """The typed values of ``ep``'s declared parameters; removes them from ``occurrences``."""
    return {p.name: parse_param(p, occurrences.pop(p.name, []), max_length) for p in ep.query}


# -- the dispatcher ----------------------------------------------------------------------------
class EndpointResource:
    """The falcon resource of one path; each method is one catalogue endpoint."""

    def __init__(self, services: Services, endpoints: Mapping[str, tuple[Endpoint, Handler]],
                 cache: AnswerCache | None = None) -> None:
        self.services = services
        self.endpoints = dict(endpoints)
        # "is not None": an empty cache has len() 0, so "cache or ..." would drop the configured one
        self.cache = cache if cache is not None else AnswerCache(
            version_of=lambda name: services.store.collection(name).version)

    def on_get(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        self.dispatch(req, resp, path)

    def on_post(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        self.dispatch(req, resp, path)

    def on_put(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        self.dispatch(req, resp, path)

    def on_delete(self, req: falcon.Request, resp: falcon.Response, **path: str) -> None:
        self.dispatch(req, resp, path)

    def dispatch(self, req: falcon.Request, resp: falcon.Response, path: dict[str, str]) -> None:
        entry = self.endpoints.get(req.method)
        if entry is None:
            raise falcon.HTTPMethodNotAllowed(sorted(self.endpoints))
        ep, handler = entry
        extras: list[Callable[[falcon.Response], None]] = []
        try:
            call = self.parse(ep, req, path)
            forwarder = self.services.forwarder
            node = forwarder.node_of(call) if forwarder is not None else None
            if forwarder is not None and node is not None:  # it runs on its workspace's node (nodes/forwarding.py)
                relayed = forwarder.relay(call, node)
                answer = Answer(relayed.status, relayed.body, relayed.media_type, relayed.stream, relayed.length,
                                relayed.headers)
            else:
                # A run's narrowed answers are neither served from nor kept in its caller's cache.
                cached_by = CACHED_BY.get(ep.name) if call.scope is None else None
                answer = self.cached(ep, handler, call, cached_by) if cached_by else success(ep, handler(call))
            extras = call.on_answer
        except DomainError as error:
            answer = failure(ep, error)
        except TextWithNulError:  # the store's last guard: the checks above should have refused it already
            answer = failure(ep, BadRequest(NUL_MESSAGE))
        except StoreUnavailableError as error:  # the shared database is down or restarting: no traceback
            log.warning("%s %s: %s", ep.method, ep.path, error)
            answer = failure(ep, ServerFailure("the database is not reachable now; try again in a moment"))
        except Exception:
            log.exception("unexpected failure in %s %s", ep.method, ep.path)
            answer = failure(ep, ServerFailure("internal error"))
        write_answer(resp, answer)
        for extra in extras:
            extra(resp)

    def cached(self, ep: Endpoint, handler: Handler, call: Call, collections: tuple[str, ...]) -> Answer:
        # Versions are read before the data, so a cached answer is never older than its versions say.
        versions = self.cache.versions(collections)
        key = answer_key(ep.name, call.user.user_id if call.user else None, call.base_url, call.params)
        answer = self.cache.get(key, collections, versions)
        if answer is None:
            answer = success(ep, handler(call))
            if answer.status == 200 and answer.stream is None:
                self.cache.put(key, collections, versions, answer)
        return answer

    def parse(self, ep: Endpoint, req: falcon.Request, path: dict[str, str]) -> Call:
        """Authenticate first (a bad session wins over bad input), then parse parameters; the body waits
        for the handler (``Call.body``)."""
        occurrences = split_query(req.query_string)
        user = None
        session_id = None
        scope = None
        if ep.auth is not Auth.PUBLIC:
            session_id = req.get_header(SESSION_HEADER) or None
            if session_id is None and ep.auth is Auth.TOKEN:
                session_id = (occurrences.get("token") or [""])[0] or None
            # a session id with a NUL is no session: it is not looked up (no store takes such text)
            found = None if has_nul(session_id) else self.services.sessions.resolve_scoped(session_id)
            if found is None:
                raise Unauthorized("MSG_ERROR_INVALID_SESSION")
            user, scope = found
        refuse_nul(occurrences)
        refuse_nul(path)
        params = parse_query(ep, occurrences, self.services.settings.max_param_length) if ep.query else {}
        call = Call(ep, self.services, req, user, session_id, params, path, occurrences, scope=scope)
        if scope is not None:
            body = call.body if ep.name in run_scope.BODY_WORKSPACE else None
            run_scope.check(self.services, ep.name, params, body, scope)
        return call


def write_answer(resp: falcon.Response, answer: Answer) -> None:
    resp.status = answer.status  # falcon renders the reason phrase itself
    if answer.status in (204, 304):
        # These answers carry no content, so no Content-Type either (RFC 9110).
        resp.content_type = None
        return
    resp.content_type = answer.media_type
    if answer.headers:
        for name, value in answer.headers.items():
            resp.set_header(name, value)
    if answer.stream is not None:
        resp.stream = answer.stream
        if answer.length is not None:
            resp.content_length = answer.length
    else:
        resp.data = answer.body or b""


def route_table(services: Services) -> dict[str, EndpointResource]:
    """One resource per catalogue path that has a handler."""
    by_path: dict[str, dict[str, tuple[Endpoint, Handler]]] = {}
    for name, handler in HANDLERS.items():
        ep = BY_NAME[name]
        by_path.setdefault(ep.path, {})[ep.method] = (ep, handler)
    cache = AnswerCache(services.settings.answer_cache_bytes,
                        lambda name: services.store.collection(name).version)
    return {path: EndpointResource(services, methods, cache) for path, methods in by_path.items()}
