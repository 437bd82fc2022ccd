"""Domain errors.  Services raise these; one layer (``api.failures``) answers them in each endpoint's style."""

from __future__ import annotations


class DomainError(Exception):
    """A failure with the HTTP-like status it means and a message safe to show the caller."""

    status = 500

    def __init__(self, message: str = "", *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status


class NoContent(DomainError):
    status = 204


class NotModified(DomainError):
    status = 304


class BadRequest(DomainError):
    status = 400


class Unauthorized(DomainError):
    status = 401


class Forbidden(DomainError):
    status = 403


class NotFound(DomainError):
    status = 404


class Conflict(DomainError):
    status = 409


class ServerFailure(DomainError):
    status = 500


class NotAvailable(DomainError):
    """A feature of the original service this server does not offer (SFTP copies, notebook consoles)."""

    status = 501


# Message codes of the original service's clients (``ClientMessageCodes``), where one exists.
MSG_INVALID_SESSION = "MSG_ERROR_INVALID_SESSION"
MSG_INVALID_WORKSPACE = "MSG_ERROR_INVALID_WORKSPACE"
MSG_SHARING_WITH_ONESELF = "MSG_ERROR_SHARING_WITH_ONESELF"
MSG_SHARING_WITH_OWNER = "MSG_ERROR_SHARING_WITH_OWNER"
MSG_SHARING_WITH_NON_EXISTENT_USER = "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER"
MSG_NO_ACCESS_RIGHTS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT"
MSG_IN_INSERT_PROCESS = "MSG_ERROR_IN_INSERT_PROCESS"
MSG_IN_DELETE_PROCESS = "MSG_ERROR_IN_DELETE_PROCESS"
