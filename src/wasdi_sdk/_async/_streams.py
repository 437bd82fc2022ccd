"""Generated from ``wasdi_sdk._streams`` by ``make async``: do not edit.

Streamed uploads and downloads, shared by the groups that move files (``client.images``, ``client.styles``,
``client.workflows``, ``client.apps``, ``client.products``, ``client.files``): below the groups, so that none of
them imports another for these."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._streams import CHUNK, Progress, _download_name
from ..atomic_files import atomic_writer

if TYPE_CHECKING:
    from .._resource import RequestOptions
    from ._base_client import AsyncBaseClient


async def download_to(
    client: AsyncBaseClient,
    endpoint: str,
    query: Mapping[str, Any],
    to: str | os.PathLike[str],
    fallback_name: str,
    on_progress: Progress | None,
    options: RequestOptions,
    overwrite: bool = True,
) -> Path:
    """Stream a download to ``to`` (a file, or an existing folder: the server's file name is used).

    The bytes go to a temporary file beside the target, renamed into place when complete; the file gets
    the permissions any new file of the user gets (the umask), not the temporary file's 0600.  With
    ``overwrite=False`` an existing target raises ``FileExistsError`` and is left as it was.
    """
    response = await client.stream(endpoint, query=query, **options)
    try:
        target = Path(to)
        if target.is_dir():
            target = target / _download_name(response.headers, fallback_name)
        if not overwrite and target.exists():
            raise FileExistsError(f"{target} exists already")
        with atomic_writer(target) as out:
            async for chunk in response.aiter_bytes(CHUNK):
                out.write(chunk)
                if on_progress is not None:
                    on_progress(len(chunk))
    finally:
        await response.aclose()
    return target
