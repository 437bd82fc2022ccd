"""/filebuffer: importing remote files into a workspace, publishing bands, sharing products between workspaces."""

from ._types import (
    B_PRIMITIVE,
    C_EMPTY_LIST,
    C_NULL,
    STRING_RESULT,
    A,
    Endpoint,
    Style,
    json_body,
    model,
    models,
    q,
    qreq,
)

ENDPOINTS = (
    Endpoint("file_buffer.share", "GET", "/filebuffer/share", Style.STATUS, A,
             query=(qreq("originWorkspaceId"), qreq("destinationWorkspaceId"), qreq("productName"),
                    q("parent", doc="Parent process id.")),
             response=STRING_RESULT, mutates=True, statuses=(200, 400, 401, 403, 500),
             summary="Copy a product to another workspace; stringValue is the SHARE process id."),
    Endpoint("file_buffer.import_product", "POST", "/filebuffer/download", Style.MARKER, B_PRIMITIVE,
             body=json_body("ImageImportViewModel"), response=STRING_RESULT, mutates=True,
             statuses=(200, 401, 403, 500),
             summary="Import a remote file into a workspace; stringValue is the process id, or DONE."),
    Endpoint("file_buffer.import_product_by_query", "GET", "/filebuffer/download", Style.MARKER, B_PRIMITIVE,
             query=(q("fileUrl"), q("name"), q("provider"), q("bbox"), q("parent"), q("platform"),
                    qreq("workspace")),
             response=STRING_RESULT, mutates=True, statuses=(200, 401, 403, 500),
             summary="Deprecated query-string form of the import; same results as the POST."),
    Endpoint("file_buffer.publish_band", "GET", "/filebuffer/publishband", Style.EMPTY, C_NULL,
             query=(qreq("fileUrl", doc="The product file name."), qreq("workspace"), qreq("band"), q("style"),
                    q("parent")),
             response=model("RabbitMessageViewModel"), mutates=True,
             summary="Publish a band on the map server: PUBLISHBAND when done, WAITFORRABBIT when queued."),
    Endpoint("file_buffer.styles", "GET", "/filebuffer/styles", Style.EMPTY, C_EMPTY_LIST,
             response=models("StyleViewModel"), contract=False,
             summary="The styles the user may apply to a band: their own, the public ones and those shared with "
                     "them (the web client's call)."),
)
