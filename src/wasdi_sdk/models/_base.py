"""Base class of every wire model."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, AliasGenerator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class WasdiModel(BaseModel):
    """A model of the service contract.

    Attributes are snake_case in Python; on the wire they keep the contract's exact camelCase
    names.  Unknown members sent by a newer server are kept (``extra="allow"``).
    """

    model_config = ConfigDict(
        alias_generator=AliasGenerator(alias=to_camel),
        populate_by_name=True,
        extra="allow",
        validate_assignment=False,
        ser_json_inf_nan="constants",
        # Build each model's validator on first use, not at import: a program uses a few of the
        # hundreds of models, and building them all was most of ``import wasdi_sdk``.
        defer_build=True,
    )

    def to_wire(self, *, keep_none: bool = False) -> dict[str, Any]:
        """The JSON-ready dict with wire names; ``None`` members are left out unless ``keep_none``."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=not keep_none)


def alias(wire: str, *others: str, required: bool = False) -> Any:
    """A field whose wire name is ``wire`` and that also accepts ``others`` on input; ``None`` by default, or
    ``required`` (a field every answer carries: its Python type is then not Optional)."""
    if required:
        return Field(alias=wire, validation_alias=AliasChoices(wire, *others), serialization_alias=wire)
    return Field(default=None, alias=wire, validation_alias=AliasChoices(wire, *others),
                 serialization_alias=wire)
