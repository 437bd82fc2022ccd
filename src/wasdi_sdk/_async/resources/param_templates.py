"""Generated from ``wasdi_sdk.resources.param_templates`` by ``make async``: do not edit.

``client.param_templates``: reusable processor parameter templates and their sharing (/processorParamTempl)."""

from __future__ import annotations

import builtins
from typing import Any, Unpack, cast

from ..._resource import RequestOptions
from ...models import (
    PrimitiveResult,
    ProcessorParametersTemplateDetailViewModel,
    ProcessorParametersTemplateListViewModel,
    ProcessorParametersTemplateSharingViewModel,
)
from ...resources.param_templates import _json_text
from .._resource import AsyncAPIResource


class AsyncParamTemplatesResource(AsyncAPIResource):
    """Async twin of ``ParamTemplatesResource``: the same methods, awaited.

    /processorParamTempl.  A template is a named set of parameters of one app."""

    async def create(
        self,
        template: ProcessorParametersTemplateDetailViewModel | None = None,
        *,
        processor_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        json_parameters: str | dict[str, Any] | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Create a template of an app the user can read (``json_parameters``: JSON text or a dict)."""
        if template is None:
            template = ProcessorParametersTemplateDetailViewModel(
                processor_id=processor_id,
                name=name,
                description=description,
                json_parameters=_json_text(json_parameters),
            )
        await self._call("param_templates.create", body=template, **options)

    async def update(
        self,
        template: ProcessorParametersTemplateDetailViewModel | None = None,
        *,
        template_id: str | None = None,
        processor_id: str | None = None,
        name: str | None = None,
        description: str | None = None,
        json_parameters: str | dict[str, Any] | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Change a template (write rights); ``template_id``, ``processor_id`` and ``name`` are required."""
        if template is None:
            template = ProcessorParametersTemplateDetailViewModel(
                template_id=template_id,
                processor_id=processor_id,
                name=name,
                description=description,
                json_parameters=_json_text(json_parameters),
            )
        await self._call("param_templates.update", body=template, **options)

    async def delete(self, template_id: str, **options: Unpack[RequestOptions]) -> None:
        """Delete a template (its owner), or drop one's own sharing of it."""
        await self._call("param_templates.delete", query={"templateId": template_id}, **options)

    async def get(
        self, template_id: str, **options: Unpack[RequestOptions]
    ) -> ProcessorParametersTemplateDetailViewModel:
        """One template with its parameters.  ``PermissionDeniedError`` when unknown or not accessible."""
        return cast(
            ProcessorParametersTemplateDetailViewModel,
            await self._call("param_templates.get", query={"templateId": template_id}, **options),
        )

    async def list(
        self, processor_id: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[ProcessorParametersTemplateListViewModel]:
        """The user's own and shared templates of an app (an empty list is a valid answer)."""
        return cast(
            builtins.list[ProcessorParametersTemplateListViewModel],
            await self._call("param_templates.list", query={"processorId": processor_id}, **options),
        )

    async def share_add(
        self,
        *,
        processor_parameters_template: str,
        user_id: str,
        rights: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> PrimitiveResult:
        """Share a template; ``rights`` is ``read`` (default) or ``write``.  Sharing twice answers "Already Shared."."""
        return cast(
            PrimitiveResult,
            await self._call(
                "param_templates.share_add",
                query={
                    "processorParametersTemplate": processor_parameters_template,
                    "userId": user_id,
                    "rights": rights,
                },
                **options,
            ),
        )

    async def share_list(
        self, processor_parameters_template: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[ProcessorParametersTemplateSharingViewModel]:
        """Users a template is shared with (an empty list also when it is unknown or not accessible)."""
        return cast(
            builtins.list[ProcessorParametersTemplateSharingViewModel],
            await self._call(
                "param_templates.share_list",
                query={"processorParametersTemplate": processor_parameters_template},
                **options,
            ),
        )

    async def share_delete(
        self, *, processor_parameters_template: str, user_id: str, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Remove a user's sharing of a template."""
        return cast(
            PrimitiveResult,
            await self._call(
                "param_templates.share_delete",
                query={"processorParametersTemplate": processor_parameters_template, "userId": user_id},
                **options,
            ),
        )
