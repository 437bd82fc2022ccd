"""``WasdiClient``: the entry point of the SDK."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from ._base_client import BaseClient
from .config import WasdiConfig, load_config
from .resources import AuthResource, UtilityResource, WorkspacesResource


class WasdiClient(BaseClient):
    """A client of one WASDI server.

    >>> with WasdiClient(base_url="http://127.0.0.1:8080") as client:
    ...     client.auth.login("me@example.org", "secret-password")
    ...     ws = client.workspaces.create(name="floods").string_value

    Groups are attributes (``client.auth``, ``client.workspaces`` ...).  Pass ``http_client`` to
    use your own ``httpx.Client`` (for example one over ``httpx.WSGITransport`` to drive a server
    in-process).
    """

    config: WasdiConfig | None = None

    @cached_property
    def auth(self) -> AuthResource:
        """/auth: login, sessions, registration, profile, password, upload accounts."""
        return AuthResource(self)

    @cached_property
    def utility(self) -> UtilityResource:
        """/wasdi: health check and feedback."""
        return UtilityResource(self)

    @cached_property
    def workspaces(self) -> WorkspacesResource:
        """/ws: workspaces and their sharing."""
        return WorkspacesResource(self)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    @classmethod
    def from_config(cls, path: str | Path | None = None, *, login: bool = True, **kwargs: Any) -> WasdiClient:
        """A client set up the way the official ``wasdi`` library would be.

        Reads the library's ``config.json`` (``USER``, ``PASSWORD``, ``BASEURL``, ``SESSIONID``,
        ``WORKSPACE``, ``WORKSPACEID``, ``REQUESTSTIMEOUT``) and the ``WASDI_*`` environment
        variables with the library's precedence.  With ``login`` and no session, logs in with
        ``USER``/``PASSWORD``.  The settings stay available as ``client.config``.
        """
        config = load_config(path)
        kwargs.setdefault("base_url", config.base_url)
        kwargs.setdefault("session_token", config.session_id)
        if config.timeout is not None:
            kwargs.setdefault("timeout", config.timeout)
        client = cls(**kwargs)
        client.config = config
        if login and not client.session_token and config.user and config.password:
            client.auth.login(config.user, config.password)
        return client
