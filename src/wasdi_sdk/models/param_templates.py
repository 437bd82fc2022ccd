"""Models of /processorParamTempl: processor parameter templates and their sharing."""

from __future__ import annotations

from ._base import WasdiModel


class ProcessorParametersTemplateListViewModel(WasdiModel):
    """A parameter template as listed for a processor."""

    template_id: str | None = None
    user_id: str | None = None
    processor_id: str | None = None
    name: str | None = None
    update_date: str | None = None
    """``yyyy-MM-dd HH:mm:ss``."""
    read_only: bool | None = None


class ProcessorParametersTemplateDetailViewModel(WasdiModel):
    """A parameter template with its JSON parameters."""

    template_id: str | None = None
    user_id: str | None = None
    processor_id: str | None = None
    name: str | None = None
    description: str | None = None
    json_parameters: str | None = None
    creation_date: str | None = None
    """``yyyy-MM-dd HH:mm:ss``."""
    update_date: str | None = None
    """``yyyy-MM-dd HH:mm:ss``."""
    read_only: bool | None = None


class ProcessorParametersTemplateSharingViewModel(WasdiModel):
    """A sharing of a parameter template with a user."""

    processor_parameters_template_id: str | None = None
    user_id: str | None = None
    owner_id: str | None = None
    permissions: str | None = None
