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
    "RawResponse",
    "ServerError",
    "UnexpectedResponseError",
    "WasdiClient",
    "WasdiConfig",
    "WasdiError",
    "__version__",
    "load_config",
]
