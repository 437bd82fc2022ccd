"""Models shared by every group: the generic result and the message wrappers."""

from __future__ import annotations

from ._base import WasdiModel, alias


class PrimitiveResult(WasdiModel):
    """The generic result record.

    Emitted as ``intValue, stringValue, doubleValue, boolValue``; the capitalised spelling some
    resources use (``IntValue`` ...) is accepted on input.
    """

    int_value: int | None = alias("intValue", "IntValue")
    string_value: str | None = alias("stringValue", "StringValue")
    double_value: float | None = alias("doubleValue", "DoubleValue")
    bool_value: bool | None = alias("boolValue", "BoolValue")


class StringResult(PrimitiveResult):
    """A ``PrimitiveResult`` whose ``stringValue`` the contract always fills on success: the id of what the call
    created or started (a workspace, a process), a greeting, a help text.  The same record on the wire; only the
    Python type of ``string_value`` is narrower (``str``), so no ``or ""`` is needed."""

    string_value: str = alias("stringValue", "StringValue", required=True)


class SuccessResponse(WasdiModel):
    message: str | None = None


class ErrorResponse(WasdiModel):
    message: str | None = None
