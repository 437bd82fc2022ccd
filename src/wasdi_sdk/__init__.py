"""wasdi_sdk: a typed client of the WASDI geospatial processing service.

Names are imported on first use (module ``__getattr__``), so ``import wasdi_sdk`` (and the server
and CLI, which import parts of it) does not pay for httpx, pydantic and the models until needed.
"""

import importlib as _importlib
import typing as _typing

# Only what a user imports is public: the helpers above are underscored, and ``dir()`` lists ``__all__``.
if _typing.TYPE_CHECKING:
    from ._async import AsyncWasdiClient
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
        NotLoggedInError,
        NotModifiedError,
        PermissionDeniedError,
        ServerError,
        UnexpectedResponseError,
        UnknownIdError,
        WasdiError,
    )
    from .config import WasdiConfig, load_config
    from .helpers import ProcessFailedError, ProcessTimeoutError, wait_for_process
    from .search_query import build_query
    from .transfer import download_file, import_and_wait, upload_and_ingest

_WHERE: dict[str, str] = {
    # public name: the module defining it
    "DEFAULT_BASE_URL": "._base_client", "RawResponse": "._base_client",
    "WasdiClient": "._client", "AsyncWasdiClient": "._async",
    **dict.fromkeys([
        "APIConnectionError", "APIError", "APITimeoutError", "AuthenticationError", "BadRequestError",
        "ConflictError", "EmptyResultError", "NoContentError", "NotFoundError", "NotLoggedInError", "NotModifiedError",
        "PermissionDeniedError", "ServerError", "UnexpectedResponseError", "UnknownIdError", "WasdiError",
    ], "._exceptions"),
    "WasdiConfig": ".config", "load_config": ".config",
    "ProcessFailedError": ".helpers", "ProcessTimeoutError": ".helpers", "wait_for_process": ".helpers",
    "build_query": ".search_query",
    "download_file": ".transfer", "import_and_wait": ".transfer", "upload_and_ingest": ".transfer",
}


def __getattr__(name: str) -> _typing.Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__version__ = "0.1.0"
__all__ = [
    "DEFAULT_BASE_URL",
    "APIConnectionError",
    "APIError",
    "APITimeoutError",
    "AsyncWasdiClient",
    "AuthenticationError",
    "BadRequestError",
    "ConflictError",
    "EmptyResultError",
    "NoContentError",
    "NotFoundError",
    "NotLoggedInError",
    "NotModifiedError",
    "PermissionDeniedError",
    "ProcessFailedError",
    "ProcessTimeoutError",
    "RawResponse",
    "ServerError",
    "UnexpectedResponseError",
    "UnknownIdError",
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
