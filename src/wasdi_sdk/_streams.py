"""Streamed uploads and downloads, shared by the groups that move files (``client.images``, ``client.styles``,
``client.workflows``, ``client.apps``, ``client.products``, ``client.files``): below the groups, so that none of
them imports another for these."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, cast

from ._disposition import disposition_filename
from .atomic_files import atomic_writer

if TYPE_CHECKING:
    from ._base_client import BaseClient
    from ._resource import RequestOptions

FileSource = str | os.PathLike[str] | IO[bytes]
"""A file to upload: a path, or a binary file object open for reading."""
Progress = Callable[[int], None]
"""Called with the number of bytes sent or received since the previous call."""

CHUNK = 64 * 1024


class _ProgressReader:
    """A binary file whose reads are reported to ``on_progress`` (httpx reads it in chunks)."""

    def __init__(self, raw: IO[bytes], on_progress: Progress) -> None:
        self._raw = raw
        self._on_progress = on_progress

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if data:
            self._on_progress(len(data))
        return data

    def seek(self, offset: int, whence: int = 0) -> int:
        return self._raw.seek(offset, whence)

    def tell(self) -> int:
        return self._raw.tell()

    def fileno(self) -> int:
        return self._raw.fileno()


@contextmanager
def upload_part(file: FileSource, filename: str | None = None,
                on_progress: Progress | None = None) -> Iterator[tuple[str, IO[bytes]]]:
    """The ``(file name, binary file)`` of a multipart part; a path is opened (and closed afterwards).

    The file is streamed by httpx in chunks, never read whole.
    """
    with ExitStack() as stack:
        if isinstance(file, str | os.PathLike):
            path = Path(file)
            handle: IO[bytes] = stack.enter_context(open(path, "rb"))
            name = filename or path.name
        else:
            handle = file
            given = getattr(file, "name", None)
            name = filename or (Path(given).name if isinstance(given, str) and given else "upload")
        if on_progress is not None:
            handle = cast(IO[bytes], _ProgressReader(handle, on_progress))
        yield name, handle


def _download_name(headers: Mapping[str, str], fallback: str) -> str:
    raw = disposition_filename(headers.get("content-disposition", ""))
    name = Path(raw.replace("\\", "/")).name
    return name if name and name not in (".", "..") else fallback


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def download_to(client: BaseClient, endpoint: str, query: Mapping[str, Any], to: str | os.PathLike[str],
                fallback_name: str, on_progress: Progress | None, options: RequestOptions,
                overwrite: bool = True) -> Path:
    """Stream a download to ``to`` (a file, or an existing folder: the server's file name is used).

    The bytes go to a temporary file beside the target, renamed into place when complete; the file gets
    the permissions any new file of the user gets (the umask), not the temporary file's 0600.  With
    ``overwrite=False`` an existing target raises ``FileExistsError`` and is left as it was.
    """
    response = client.stream(endpoint, query=query, **options)
    try:
        target = Path(to)
        if target.is_dir():
            target = target / _download_name(response.headers, fallback_name)
        if not overwrite and target.exists():
            raise FileExistsError(f"{target} exists already")
        with atomic_writer(target) as out:
            for chunk in response.iter_bytes(CHUNK):
                out.write(chunk)
                if on_progress is not None:
                    on_progress(len(chunk))
    finally:
        response.close()
    return target
