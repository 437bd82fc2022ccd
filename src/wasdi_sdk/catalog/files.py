"""/catalog: the file calls the official ``wasdi`` library makes (not in the contract, ``contract=False``).

Processors written for WASDI use these to find, fetch, describe and ingest workspace files, so a server
the official library works against must answer them.  The web client adds the ingest from the upload
account and the FTP upload; the library also copies files into the user's SFTP folder.
"""

from ._types import (
    B_PRIMITIVE,
    BYTES,
    JSON,
    PRIMITIVE,
    STRING_RESULT,
    A,
    Auth,
    Endpoint,
    Style,
    json_body,
    q,
    qbool,
    qreq,
)

ENDPOINTS = (
    Endpoint("files.check_available", "GET", "/catalog/checkdownloadavaialibitybyname", Style.STATUS, A,
             auth=Auth.TOKEN, query=(qreq("filename"), qreq("workspace"), q("procws")), response=PRIMITIVE,
             statuses=(200, 400, 401, 403, 404), contract=False,
             summary="Whether a workspace file exists (boolValue); 404 when it does not."),
    Endpoint("files.download", "GET", "/catalog/downloadbyname", Style.STATUS, A, auth=Auth.TOKEN,
             query=(q("filename", doc="Required; the web client's link spells it fileName."),
                    q("workspace", doc="Required; the web client's link spells it worskpaceId."), q("procws")),
             response=BYTES,
             statuses=(200, 400, 401, 403, 404, 500), contract=False,
             summary="Download a workspace file (streamed, with its name in Content-Disposition); filename and "
                     "workspace are required (the web client's fileName and worskpaceId are accepted)."),
    Endpoint("files.on_node", "GET", "/catalog/fileOnNode", Style.STATUS, A, auth=Auth.TOKEN,
             query=(qreq("filename"), qreq("workspace")), response=PRIMITIVE, statuses=(200, 400, 401, 403, 500),
             contract=False, summary="Whether the file is on this node's disk (boolValue)."),
    Endpoint("files.properties", "GET", "/catalog/properties", Style.STATUS, A,
             query=(qreq("file"), qreq("workspace"), qbool("getchecksum", False)), response=JSON,
             statuses=(200, 400, 401, 403, 404, 500), contract=False,
             summary="Name, size, last modification and (on request) the MD5 checksum of a workspace file."),
    Endpoint("files.ingest", "GET", "/catalog/upload/ingestinws", Style.STATUS, A,
             query=(qreq("file"), qreq("workspace"), q("style"), q("parent"), q("platform")), response=STRING_RESULT,
             mutates=True, statuses=(200, 400, 401, 403, 404, 500), contract=False,
             summary="Queue an INGEST of a file already in the workspace folder; stringValue is the process id."),
    Endpoint("files.ingest_upload", "PUT", "/catalog/upload/ingest", Style.STATUS, A,
             query=(qreq("file"), qreq("workspace"), q("style"), q("parent"), q("platform")), response=STRING_RESULT,
             mutates=True, statuses=(200, 400, 401, 403, 404, 500), contract=False,
             summary="Move a file of the caller's upload (file-transfer) account into a workspace and queue its "
                     "INGEST; stringValue is the process id (the web client's call)."),
    Endpoint("files.ftp_upload", "PUT", "/catalog/upload/ftp", Style.MARKER, B_PRIMITIVE,
             query=(qreq("workspace"), q("parent")), body=json_body("FtpTransferViewModel", required=False),
             response=PRIMITIVE, mutates=True, statuses=(200, 400, 401, 403, 404), contract=False,
             summary="Queue an FTPUPLOAD: send a workspace file (fileName) to the FTP, FTPS or SFTP server the body "
                     "names (server or serverIp, port, user, password, destinationAbsolutePath, sftp, ftps); "
                     "stringValue is the process id."),
    Endpoint("files.copy_to_sftp", "GET", "/catalog/copytosfpt", Style.MARKER, B_PRIMITIVE,
             query=(qreq("file"), qreq("workspace"), q("parent"),
                    q("path", doc="A folder inside the caller's transfer folder.")),
             response=PRIMITIVE, mutates=True, statuses=(200, 400, 401, 403, 404), contract=False,
             summary="Queue a COPYTOSFTP: copy a workspace file into the caller's transfer (SFTP) folder; "
                     "stringValue is the process id."),
)
