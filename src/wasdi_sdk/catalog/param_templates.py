"""/processorParamTempl: reusable processor parameter templates and their sharing."""

from ._types import (
    B_PRIMITIVE,
    C_EMPTY_LIST,
    EMPTY,
    PRIMITIVE,
    A,
    Endpoint,
    Style,
    json_body,
    model,
    models,
    q,
    qreq,
)

_TEMPLATE_BODY = json_body("ProcessorParametersTemplateDetailViewModel", json_fields=("jsonParameters",))

ENDPOINTS = (
    Endpoint("param_templates.delete", "DELETE", "/processorParamTempl/delete", Style.STATUS, A,
             query=(qreq("templateId"),), response=EMPTY, mutates=True, statuses=(200, 400, 401, 403),
             summary="Delete a template (owner), or remove one's own sharing of it."),
    Endpoint("param_templates.update", "POST", "/processorParamTempl/update", Style.STATUS, A,
             body=_TEMPLATE_BODY, response=EMPTY, mutates=True,
             statuses=(200, 400, 401, 403), summary="Change a template (write permission needed)."),
    Endpoint("param_templates.create", "POST", "/processorParamTempl/add", Style.STATUS, A,
             body=_TEMPLATE_BODY, response=EMPTY, mutates=True,
             statuses=(200, 400, 401, 403, 500), summary="Create a parameter template for a processor."),
    Endpoint("param_templates.get", "GET", "/processorParamTempl/get", Style.STATUS, A,
             query=(qreq("templateId"),), response=model("ProcessorParametersTemplateDetailViewModel"),
             statuses=(200, 401, 403, 500), summary="One template, with its parameters."),
    Endpoint("param_templates.list", "GET", "/processorParamTempl/getlist", Style.STATUS, A,
             query=(qreq("processorId"),), response=models("ProcessorParametersTemplateListViewModel"),
             statuses=(200, 400, 401, 403, 500),
             summary="Templates of a processor that the user owns or that are shared with them."),
    Endpoint("param_templates.share_add", "PUT", "/processorParamTempl/share/add", Style.MARKER, B_PRIMITIVE,
             query=(qreq("processorParametersTemplate"), qreq("userId"), q("rights")), response=PRIMITIVE,
             mutates=True, statuses=(200, 400, 401, 403, 500), summary="Share a template with a user."),
    Endpoint("param_templates.share_list", "GET", "/processorParamTempl/share/byprocessorParametersTemplate",
             Style.EMPTY, C_EMPTY_LIST, query=(qreq("processorParametersTemplate"),),
             response=models("ProcessorParametersTemplateSharingViewModel"),
             summary="Users a template is shared with."),
    Endpoint("param_templates.share_delete", "DELETE", "/processorParamTempl/share/delete", Style.MARKER,
             B_PRIMITIVE, query=(qreq("processorParametersTemplate"), qreq("userId")), response=PRIMITIVE,
             mutates=True, statuses=(200, 400, 401, 500), summary="Remove a user's sharing of a template."),
)
