"""One exception hierarchy for the three ways the service signals failure.

Exceptions are grouped by meaning, not by transport: ``except PermissionDeniedError`` catches a
403 whether it came as an HTTP status (style A) or as ``intValue=403`` in a body (style B).
The ``style`` attribute says which.
"""

from __future__ import annotations

from typing import Any

import httpx

from .catalog import Style


class WasdiError(Exception):
    """Root of every error the SDK raises."""


class APIError(WasdiError):
    """The service answered, and the answer is a failure.

    ``message`` is a sentence for people; ``code`` the service's message code (``MSG_ERROR_...``) when it
    answered one, for programs.  Given a code as ``message``, the exception reads it as the code and says
    its sentence (``wasdi_sdk.messages``).
    """

    def __init__(self, message: str, *, style: Style | None = None, status: int | None = None,
                 body: Any = None, response: httpx.Response | None = None, endpoint: str | None = None,
                 code: str | None = None) -> None:
        from .messages import explain

        sentence, found = explain(message, status)
        super().__init__(sentence)
        self.message = sentence
        """What went wrong, as a sentence."""
        self.code = code or found
        """The service's message code, or ``None`` when it answered words or a bare status."""
        self.style = style
        """How the failure was signalled: ``Style.STATUS``, ``Style.MARKER`` or ``Style.EMPTY``."""
        self.status_code = status
        """The HTTP status (style A) or the status code carried in the body (style B); ``None`` when the service
        said nothing (style C) or was not asked (``NotLoggedInError``)."""
        self.body = body
        self.response = response
        self.endpoint = endpoint

    @property
    def status(self) -> int | None:
        """``status_code`` under its earlier name."""
        return self.status_code

    def __str__(self) -> str:
        where = f" [{self.endpoint}]" if self.endpoint else ""
        shown = [part for part in (self.code, f"status {self.status_code}" if self.status_code is not None else "")
                 if part]
        detail = f" ({', '.join(shown)})" if shown else ""
        return f"{self.message}{detail}{where}"


class BadRequestError(APIError):
    """400: invalid or missing input."""


class AuthenticationError(APIError):
    """401: no session, an expired session, or wrong credentials."""


class NotLoggedInError(AuthenticationError):
    """A call that needs a session, made before logging in: nothing was sent.  ``client.auth.login(user, password)``
    (or ``WasdiClient(session_token=...)``, ``WasdiClient.from_config()``) first."""


class PermissionDeniedError(APIError):
    """403: authenticated, but not allowed."""


class NotFoundError(APIError):
    """404: the resource does not exist."""


class ConflictError(APIError):
    """409: the request conflicts with the current state (e.g. a name already in use)."""


class NotModifiedError(APIError):
    """304: nothing changed (already registered, same file content)."""


class NoContentError(APIError):
    """204: the download target is missing."""


class ServerError(APIError):
    """5xx: the server failed."""


class EmptyResultError(APIError):
    """Style C: the service answered 200 with null, -1, ERROR or a model with no identity.

    The service does not say why (invalid session, no access or not found look the same).
    An empty *list* is a legitimate answer and is returned, never raised.
    """


class UnknownIdError(NotFoundError, EmptyResultError):
    """A read of one thing by its id answered with nothing (style C): no such thing, or not one the caller may
    read (the service does not say which).  The message names the id and the call.  A ``NotFoundError``; also an
    ``EmptyResultError``, what earlier versions raised here."""


class UnexpectedResponseError(APIError):
    """The body is not what the contract says this endpoint returns."""


class APIConnectionError(WasdiError):
    """The service could not be reached."""


class APITimeoutError(APIConnectionError):
    """The request timed out."""


_BY_STATUS: dict[int, type[APIError]] = {
    204: NoContentError,
    304: NotModifiedError,
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
}


def error_class_for(status: int | None) -> type[APIError]:
    """The exception class that means ``status``."""
    if status is None:
        return APIError
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    if status >= 500:
        return ServerError
    return APIError
