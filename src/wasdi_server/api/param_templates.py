"""/processorParamTempl: reusable processor parameter templates and their sharing."""

from __future__ import annotations

from wasdi_sdk.models import (
    PrimitiveResult,
    ProcessorParametersTemplateDetailViewModel,
    ProcessorParametersTemplateListViewModel,
    ProcessorParametersTemplateSharingViewModel,
)

from .framework import Call, handles


@handles("param_templates.create")
def create_template(call: Call) -> None:
    call.services.param_templates.add(call.caller, call.body.to_wire())


@handles("param_templates.update")
def update_template(call: Call) -> None:
    call.services.param_templates.update(call.caller, call.body.to_wire())


@handles("param_templates.delete")
def delete_template(call: Call) -> None:
    call.services.param_templates.delete(call.caller, call.params["templateId"])


@handles("param_templates.get")
def get_template(call: Call) -> ProcessorParametersTemplateDetailViewModel:
    view = call.services.param_templates.get(call.caller, call.params["templateId"])
    return ProcessorParametersTemplateDetailViewModel.model_validate(view)


@handles("param_templates.list")
def list_templates(call: Call) -> list[ProcessorParametersTemplateListViewModel]:
    views = call.services.param_templates.list_for(call.caller, call.params["processorId"])
    return [ProcessorParametersTemplateListViewModel.model_validate(v) for v in views]


@handles("param_templates.share_add")
def share_template(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.param_templates.share(call.caller, p["processorParametersTemplate"], p["userId"],
                                                  p["rights"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome.message)


@handles("param_templates.share_delete")
def unshare_template(call: Call) -> PrimitiveResult:
    p = call.params
    call.services.param_templates.unshare(call.caller, p["processorParametersTemplate"], p["userId"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value="Done")


@handles("param_templates.share_list")
def list_template_sharings(call: Call) -> list[ProcessorParametersTemplateSharingViewModel]:
    sharings = call.services.param_templates.sharings(call.caller, call.params["processorParametersTemplate"])
    return [ProcessorParametersTemplateSharingViewModel.model_validate(s) for s in sharings]
