"""The one JSON reader: every JSON text the server reads from a request goes through it, whatever carries
it (a JSON body, a text body, a query parameter, a string field of another JSON document, a stored
descriptor a user wrote), with the request bodies' limits (``max_json_body_bytes``, ``max_json_depth``).

The nesting is counted before the text reaches ``json.loads``, whose recursion a few kilobytes of ``[``
exhaust (a ``RecursionError``, which is not a ``ValueError``, so callers catching the latter answered 500).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import BadRequest

if TYPE_CHECKING:
    from .settings import Settings

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
DEFAULT_MAX_DEPTH = 64
JSON_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{}]')
"""Strings (skipped whole, so brackets inside them do not count) and the brackets that nest."""


NOT_JSON = "is not valid JSON"


class JsonRefused(BadRequest):
    """A JSON text too large, too deep or not JSON (400, the message names the limit)."""

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(f"{what} {problem}")
        self.problem = problem
        """``is not valid JSON``, ``nests deeper than 64 levels`` or ``is larger than 10485760 bytes``."""

    @property
    def over_a_limit(self) -> bool:
        return self.problem != NOT_JSON


def json_depth_problem(raw: bytes, max_depth: int) -> str | None:
    """Why ``raw`` nests deeper than ``max_depth`` arrays/objects, or ``None`` (a linear scan, no recursion)."""
    depth = 0
    for token in JSON_TOKEN.finditer(raw):
        char = token.group(0)[:1]
        if char in (b"[", b"{"):
            depth += 1
            if depth > max_depth:
                return f"nests deeper than {max_depth} levels"
        elif char in (b"]", b"}"):
            depth -= 1
    return None


@dataclass(frozen=True)
class JsonReader:
    """Reads JSON within a size and a nesting limit; ``JsonRefused`` (a ``BadRequest``) otherwise."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_depth: int = DEFAULT_MAX_DEPTH

    @classmethod
    def of(cls, settings: Settings) -> JsonReader:
        """The reader with the settings' request-body limits."""
        return cls(settings.max_json_body_bytes, settings.max_json_depth)

    def read(self, text: str | bytes, what: str = "the body") -> Any:
        """The value of ``text``; ``what`` names it in the refusal ("the body is not valid JSON")."""
        raw = text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass")
        if len(raw) > self.max_bytes:
            raise JsonRefused(what, f"is larger than {self.max_bytes} bytes")
        problem = json_depth_problem(raw, self.max_depth)
        if problem:
            raise JsonRefused(what, problem)
        try:
            return json.loads(text)
        except (ValueError, RecursionError) as e:
            raise JsonRefused(what, NOT_JSON) from e

    def is_json(self, text: str | bytes) -> bool:
        """Whether ``text`` is JSON within the limits."""
        try:
            self.read(text)
        except JsonRefused:
            return False
        return True
