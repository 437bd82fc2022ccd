"""/images: image upload, retrieval, existence check and deletion; processor logo and gallery."""

from ._types import (
    BYTES,
    EMPTY,
    PRIMITIVE,
    A,
    Auth,
    Endpoint,
    Style,
    multipart,
    q,
    qbool,
    qreq,
)

_COLLECTION = qreq("collection", doc="A declared image collection, e.g. processors or users.")

ENDPOINTS = (
    Endpoint("images.upload", "POST", "/images/upload", Style.STATUS, A, body=multipart("image"),
             query=(_COLLECTION, q("folder"), qreq("name"), qbool("resize", doc="Accepted; has no effect."),
                    qbool("thumbnail", doc="Accepted; has no effect.")),
             response=EMPTY, mutates=True, statuses=(200, 400, 401, 403, 500),
             summary="Store an image (jpg, png or svg) in a collection, replacing one of the same name."),
    Endpoint("images.get", "GET", "/images/get", Style.STATUS, A, auth=Auth.TOKEN,
             query=(_COLLECTION, qreq("name"), q("folder")), response=BYTES,
             statuses=(200, 204, 400, 401, 403, 500), summary="The raw bytes of an image."),
    Endpoint("images.exists", "GET", "/images/exists", Style.STATUS, A, auth=Auth.TOKEN,
             query=(_COLLECTION, qreq("name"), q("folder")), response=EMPTY,
             statuses=(200, 400, 401, 403, 404, 500), summary="Whether an image exists (200) or not (404)."),
    Endpoint("images.delete", "DELETE", "/images/delete", Style.STATUS, A,
             query=(_COLLECTION, qreq("name"), q("folder")), response=EMPTY, mutates=True,
             statuses=(200, 400, 401, 403, 404, 500), summary="Delete an image."),
    Endpoint("images.upload_processor_logo", "POST", "/images/processors/logo/upload", Style.STATUS, A,
             body=multipart("image"), query=(qreq("processorId"),), response=EMPTY, mutates=True,
             statuses=(200, 401, 403, 404, 500), summary="Set a processor's logo."),
    Endpoint("images.upload_gallery_image", "POST", "/images/processors/gallery/upload", Style.STATUS, A,
             body=multipart("image"), query=(qreq("processorId"),), response=PRIMITIVE, mutates=True,
             statuses=(200, 400, 401, 403, 404),
             summary="Add an image to a processor's gallery; stringValue is the image link."),
)
