"""Helpers beside the endpoint methods: moving files in and out of a workspace and waiting for the result.

- ``upload_and_ingest``: upload a local file (streamed) and wait until it is a product of the workspace.
- ``import_and_wait``: import a remote file (an http(s) or file:// URL, e.g. a search result's ``link``)
  and wait until the DOWNLOAD process ends.
- ``download_file``: stream a workspace file to a local path (atomic: a partial file never takes the
  target's name).

Progress callbacks receive the number of bytes moved since the previous call (``rich``'s ``advance``
fits); ``on_update`` sees every state read while waiting for a process.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol

from .helpers import WaitingClient, wait_for_process

if TYPE_CHECKING:
    from ._streams import FileSource, Progress
    from .models import GeorefProductViewModel, ProcessWorkspaceViewModel
    from .resources.file_buffer import FileBufferResource
    from .resources.files import FilesResource
    from .resources.products import ProductsResource

__all__ = ["TransferClient", "download_file", "import_and_wait", "upload_and_ingest"]

ALREADY_PRESENT = "DONE"
"""What the service answers an import of a product that is already in the workspace."""


class TransferClient(WaitingClient, Protocol):
    """What the transfers need of a client: the groups they move files with and wait on (``WasdiClient`` has
    them), so that the helpers depend on the groups and not on the client that gathers them."""

    @property
    def products(self) -> ProductsResource: ...

    @property
    def files(self) -> FilesResource: ...

    @property
    def file_buffer(self) -> FileBufferResource: ...


def _file_name(file: FileSource, name: str | None) -> str:
    if name:
        return name
    if isinstance(file, str | os.PathLike):
        return Path(file).name
    given = getattr(file, "name", None)
    if isinstance(given, str) and given:
        return Path(given).name
    raise ValueError("give the file's name in the workspace (name=...) for an unnamed file object")


def upload_and_ingest(client: TransferClient, workspace: str, file: FileSource | IO[bytes], *, name: str | None = None,
                      style: str | None = None, platform: str | None = None, timeout: float | None = None,
                      poll_interval: float = 0.5, on_progress: Progress | None = None,
                      on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None) -> GeorefProductViewModel:
    """Upload ``file`` into ``workspace`` and wait for its INGEST; the new product.

    The file is streamed (``products.upload_without_ingest``) and then ingested with
    ``files.ingest``, whose answer names the INGEST process this helper waits for (the
    ``/product/uploadfile`` call does not return it).  Raises ``ProcessFailedError`` when the INGEST
    fails and ``ProcessTimeoutError`` after ``timeout`` seconds.
    """
    file_name = _file_name(file, name)
    client.products.upload_without_ingest(workspace, file, name=file_name, on_progress=on_progress)
    started = client.files.ingest(file_name, workspace, style=style, platform=platform)
    process_id = started.string_value
    wait_for_process(client, process_id, timeout=timeout, poll_interval=poll_interval, max_interval=5.0,
                     on_update=on_update)
    return client.products.get(file_name, workspace)


def import_and_wait(client: TransferClient, workspace: str, file_url: str, *, name: str | None = None,
                    provider: str | None = None, platform: str | None = None, bbox: str | None = None,
                    timeout: float | None = None, poll_interval: float = 0.5,
                    on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
                    ) -> ProcessWorkspaceViewModel | None:
    """Import ``file_url`` into ``workspace`` and wait for the DOWNLOAD process; its final state.

    ``None`` when the service answers that the product is already in the workspace.  Raises
    ``ProcessFailedError`` when the import fails (the process payload says why).
    """
    started = client.file_buffer.import_product(file_url=file_url, workspace=workspace, name=name,
                                                provider=provider, platform=platform, bbox=bbox)
    process_id = started.string_value
    if process_id == ALREADY_PRESENT:
        return None
    return wait_for_process(client, process_id, timeout=timeout, poll_interval=poll_interval, max_interval=5.0,
                            on_update=on_update)


def download_file(client: TransferClient, workspace: str, file_name: str, to: str | os.PathLike[str], *,
                  on_progress: Progress | None = None) -> Path:
    """Stream the workspace file ``file_name`` to ``to`` (a path, or a folder); the path written."""
    return client.files.download(file_name, workspace, to, on_progress=on_progress)
