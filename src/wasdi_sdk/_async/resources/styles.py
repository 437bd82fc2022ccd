"""Generated from ``wasdi_sdk.resources.styles`` by ``make async``: do not edit.

``client.styles``: map styles (SLD files) and their sharing (/styles)."""

from __future__ import annotations

import builtins
import os
from pathlib import Path
from typing import Unpack, cast, overload

from ..._lookup import find_one
from ..._resource import RequestOptions
from ..._streams import FileSource, Progress, upload_part
from ...models import PrimitiveResult, StyleSharingViewModel, StyleViewModel
from .._resource import AsyncAPIResource
from .._streams import download_to


class AsyncStylesResource(AsyncAPIResource):
    """Async twin of ``StylesResource``: the same methods, awaited.

    /styles.  Style names are unique on a server; files are SLD (XML)."""

    async def upload(
        self,
        file: FileSource,
        *,
        name: str,
        description: str | None = None,
        public: bool | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> PrimitiveResult:
        """Create a style from an SLD file (a path or an open binary file, streamed).

        A taken name or a file that is not an SLD is a ``BadRequestError``.  This server puts the new
        style's id in ``string_value``.
        """
        with upload_part(file, None, on_progress) as part:
            return cast(
                PrimitiveResult,
                await self._call(
                    "styles.upload",
                    query={"name": name, "description": description, "public": public},
                    files={"file": part},
                    **options,
                ),
            )

    async def update_file(
        self,
        file: FileSource,
        *,
        style_id: str,
        zipped: bool | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Replace a style's SLD; ``zipped=True`` when ``file`` is a zip holding one ``.sld``.

        ``NotModifiedError`` when the new file is identical to the current one.
        """
        with upload_part(file, None, on_progress) as part:
            await self._call(
                "styles.update_file", query={"styleId": style_id, "zipped": zipped}, files={"file": part}, **options
            )

    async def get_xml(self, style_id: str, **options: Unpack[RequestOptions]) -> str:
        """The SLD of a style, as XML text."""
        return cast(str, await self._call("styles.get_xml", query={"styleId": style_id}, **options))

    async def update_xml(self, *, style_id: str, style_xml: str, **options: Unpack[RequestOptions]) -> None:
        """Replace a style's SLD with ``style_xml``; ``NotModifiedError`` when it is the same."""
        await self._call("styles.update_xml", query={"styleId": style_id}, body={"styleXml": style_xml}, **options)

    async def update_params(
        self,
        style_id: str,
        *,
        description: str | None = None,
        public: bool | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Change a style's description and/or visibility (what is left out stays)."""
        await self._call(
            "styles.update_params", query={"styleId": style_id, "description": description, "public": public}, **options
        )

    async def find(self, name: str, **options: Unpack[RequestOptions]) -> StyleViewModel:
        """The style named ``name`` among those the user sees (``NotFoundError`` naming it when there is none)."""
        listed = await self.list(**options)
        return find_one(
            listed,
            name,
            name_of=lambda s: s.name,
            id_of=lambda s: s.style_id,
            noun="style",
            call=f"client.styles.find({name!r})",
        )

    async def list(self, **options: Unpack[RequestOptions]) -> builtins.list[StyleViewModel]:
        """Styles the user owns, that are public, or that are shared with them (an empty list is a valid answer)."""
        return cast(builtins.list[StyleViewModel], await self._call("styles.list", **options))

    async def delete(self, style_id: str, **options: Unpack[RequestOptions]) -> None:
        """Delete a style (its owner or an admin), or drop one's own sharing of it.  Main node only."""
        await self._call("styles.delete", query={"styleId": style_id}, **options)

    async def node_delete(self, *, style_id: str, style_name: str, **options: Unpack[RequestOptions]) -> None:
        """Delete a style's copy on a compute node (called on that node)."""
        await self._call("styles.node_delete", query={"styleId": style_id, "styleName": style_name}, **options)

    async def share_add(
        self, *, style_id: str, user_id: str, rights: str | None = None, **options: Unpack[RequestOptions]
    ) -> PrimitiveResult:
        """Share a style; ``rights`` is ``read`` (default) or ``write``.

        Sharing twice is an error (``BadRequestError`` "Already shared").
        """
        return cast(
            PrimitiveResult,
            await self._call(
                "styles.share_add", query={"styleId": style_id, "userId": user_id, "rights": rights}, **options
            ),
        )

    async def share_delete(self, *, style_id: str, user_id: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Remove a user's sharing (the user themself, the owner or an admin)."""
        return cast(
            PrimitiveResult,
            await self._call("styles.share_delete", query={"styleId": style_id, "userId": user_id}, **options),
        )

    async def share_list(
        self, style_id: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[StyleSharingViewModel]:
        """Sharings of a style (an empty list also when it is unknown or not accessible)."""
        return cast(
            builtins.list[StyleSharingViewModel],
            await self._call("styles.share_list", query={"styleId": style_id}, **options),
        )

    @overload
    async def download(
        self, style_id: str, *, to: None = None, on_progress: Progress | None = None, **options: Unpack[RequestOptions]
    ) -> bytes: ...

    @overload
    async def download(
        self,
        style_id: str,
        *,
        to: str | os.PathLike[str],
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> Path: ...

    async def download(
        self,
        style_id: str,
        *,
        to: str | os.PathLike[str] | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes | Path:
        """The SLD file: its bytes, or streamed to ``to`` (a file, or a folder: ``<name>.sld`` in it).

        ``NoContentError`` when the style or its file does not exist.
        """
        query = {"styleId": style_id}
        if to is None:
            return cast(bytes, await self._call("styles.download", query=query, **options))
        return await download_to(self._client, "styles.download", query, to, f"{style_id}.sld", on_progress, options)

    @overload
    async def download_by_name(
        self, style: str, *, to: None = None, on_progress: Progress | None = None, **options: Unpack[RequestOptions]
    ) -> bytes: ...

    @overload
    async def download_by_name(
        self,
        style: str,
        *,
        to: str | os.PathLike[str],
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> Path: ...

    async def download_by_name(
        self,
        style: str,
        *,
        to: str | os.PathLike[str] | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes | Path:
        """As ``download``, for the style named ``style``."""
        query = {"style": style}
        if to is None:
            return cast(bytes, await self._call("styles.download_by_name", query=query, **options))
        return await download_to(
            self._client, "styles.download_by_name", query, to, f"{style}.sld", on_progress, options
        )
