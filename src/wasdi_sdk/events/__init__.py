"""Listening to a server's messages: STOMP over WebSocket, the way WASDI's web client does.

- ``stomp``: the frame codec (no I/O; the server's built-in broker uses it too);
- ``protocol``: the client's side of the conversation (no I/O);
- ``stream``: ``EventStream`` over a blocking WebSocket (``client.events.listen``);
- ``broker``: where the server's broker is, and a stream opened on it (``client.events`` and the waits);
- ``updates``: ``ProcessUpdates``, the message source that wakes waits.

The message models are in ``wasdi_sdk.models.events``.
"""

from __future__ import annotations

ADDRESS_PATH = "/messages/address"
"""Where a server of this toolkit says where its broker is (``BrokerAddress``); outside the contract."""
WEBSTOMP_URL_VARIABLE = "WASDI_WEBSTOMP_URL"
"""Environment variable naming a broker's WebSocket address for servers that do not say it."""

__all__ = ["ADDRESS_PATH", "WEBSTOMP_URL_VARIABLE"]
