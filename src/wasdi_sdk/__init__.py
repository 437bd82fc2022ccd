"""wasdi_sdk: a typed client of the WASDI geospatial processing service."""

from ._base_client import DEFAULT_BASE_URL, RawResponse
from ._client import WasdiClient
from ._exceptions import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    BadRequestError,
    ConflictError,
    EmptyResultError,
    NoContentError,
    NotFoundError,
    NotModifiedError,
    PermissionDeniedError,
    ServerError,
    UnexpectedResponseError,
    WasdiError,
)
from .config import WasdiConfig, load_config
from .helpers import ProcessFailedError, ProcessTimeoutError, wait_for_process
from .search_query import build_query
from .transfer import download_file, import_and_wait, upload_and_ingest

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BASE_URL",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "EmptyResultError",
    "NoContentError",
    "NotFoundError",
    "NotModifiedError",
    "PermissionDeniedError",
    "ProcessFailedError",
    "ProcessTimeoutError",
    "RawResponse",
    "ServerError",
    "UnexpectedResponseError",
    "WasdiClient",
    "WasdiConfig",
    "WasdiError",
    "__version__",
    "build_query",
    "download_file",
    "import_and_wait",
    "load_config",
    "upload_and_ingest",
    "wait_for_process",
]
