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


class SuccessResponse(WasdiModel):
    message: str | None = None


class ErrorResponse(WasdiModel):
    message: str | None = None
