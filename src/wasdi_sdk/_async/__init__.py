"""The async client, generated from the sync modules by ``tools/gen_async.py`` (``make async``).

Every module here except this one is generated: edit the sync module of the same path and regenerate;
``tests/sdk/test_async_generated.py`` fails while the two differ.

A sync class whose I/O is not httpx (the live messages of ``client.events``, over STOMP/WebSocket) gets a twin
written by hand beside these, over the same transport-free codec and models, named in ``HAND_WRITTEN`` of
``tools/gen_async.py`` so that the generated client attaches it.
"""

from ._client import AsyncWasdiClient

__all__ = ["AsyncWasdiClient"]
