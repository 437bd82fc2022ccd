"""The async client, generated from the sync modules by ``tools/gen_async.py`` (``make async``).

Every module here except this one is generated: edit the sync module of the same path and regenerate;
``tests/sdk/test_async_generated.py`` fails while the two differ.
"""

from ._client import AsyncWasdiClient

__all__ = ["AsyncWasdiClient"]
