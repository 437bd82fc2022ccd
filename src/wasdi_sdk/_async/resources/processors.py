"""Generated from ``wasdi_sdk.resources.processors`` by ``make async``: do not edit.

``client.processors``: apps (processors): upload, update, deploys, runs, logs, files and UI (/processors); the
store, sharing and payments come from ``ProcessorStoreMethods``."""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Unpack, cast, overload

from ..._resource import RequestOptions
from ..._streams import FileSource, Progress, upload_part
from ...models import (
    DeployedProcessorViewModel,
    ProcessorLogViewModel,
    ProcessWorkspaceViewModel,
    RunningProcessorViewModel,
    StringResult,
)
from ...resources.processors import Parameters, _encoded
from .._resource import AsyncAPIResource
from .._streams import download_to
from .processes import AsyncProcessesResource
from .processor_store import AsyncProcessorStoreMethods


class AsyncProcessorsResource(AsyncProcessorStoreMethods, AsyncAPIResource):
    """Async twin of ``ProcessorsResource``: the same methods, awaited.

    /processors.  App names are unique on a server, lower case, without spaces."""

    async def upload(
        self,
        file: FileSource,
        *,
        name: str,
        workspace: str | None = None,
        version: str | None = None,
        description: str | None = None,
        type: str | None = None,
        params_sample: str | None = None,
        public: int | None = None,
        minute_timeout: int | None = None,
        force: bool | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> StringResult:
        """Upload an app zip (a path or an open binary file, streamed) and queue its deploy.

        ``string_value`` is the process id of the deploy; a taken name is a ``ConflictError``, a bad name or
        zip a ``BadRequestError`` (the failures come in the body, raised here by meaning).  ``minute_timeout``
        (the ``timeout`` query parameter) is in minutes (0 or less: none).
        """
        with upload_part(file, None, on_progress) as part:
            return cast(
                StringResult,
                await self._call(
                    "processors.upload",
                    query={
                        "workspace": workspace,
                        "name": name,
                        "version": version,
                        "description": description,
                        "type": type,
                        "paramsSample": params_sample,
                        "public": public,
                        "timeout": minute_timeout,
                        "force": force,
                    },
                    files={"file": part},
                    **options,
                ),
            )

    async def update(
        self,
        processor_id: str,
        *,
        processor: DeployedProcessorViewModel | Mapping[str, Any],
        **options: Unpack[RequestOptions],
    ) -> None:
        """Change an app's description, version, visibility, timeout or sample parameters (write rights)."""
        await self._call("processors.update", query={"processorId": processor_id}, body=processor, **options)

    async def update_files(
        self,
        file: FileSource,
        *,
        processor_id: str,
        workspace: str | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Apply a zip (unpacked over the app's files) or one file; the environment is rebuilt only when
        ``pip.txt`` changed, else the library is refreshed."""
        with upload_part(file, None, on_progress) as part:
            await self._call(
                "processors.update_files",
                query={"processorId": processor_id, "workspace": workspace},
                files={"file": part},
                **options,
            )

    async def redeploy(
        self, processor_id: str, *, workspace: str | None = None, **options: Unpack[RequestOptions]
    ) -> None:
        """Queue a rebuild of the app's environment."""
        await self._call("processors.redeploy", query={"processorId": processor_id, "workspace": workspace}, **options)

    async def update_libraries(
        self, processor_id: str, *, workspace: str | None = None, **options: Unpack[RequestOptions]
    ) -> None:
        """Queue a refresh of the official library in the app's environment."""
        await self._call(
            "processors.update_libraries", query={"processorId": processor_id, "workspace": workspace}, **options
        )

    async def clear_build_flag(self, processor_id: str, **options: Unpack[RequestOptions]) -> None:
        """Clear the app's deployment-ongoing flag."""
        await self._call("processors.clear_build_flag", query={"processorId": processor_id}, **options)

    async def delete(
        self, processor_id: str, *, workspace: str | None = None, **options: Unpack[RequestOptions]
    ) -> None:
        """Delete an app (its owner or an admin), or drop one's own sharing of it."""
        await self._call("processors.delete", query={"processorId": processor_id, "workspace": workspace}, **options)

    async def node_delete(
        self,
        processor_id: str,
        *,
        workspace: str | None = None,
        processor_name: str | None = None,
        processor_type: str | None = None,
        version: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Delete an app's copy on a compute node (called on that node)."""
        await self._call(
            "processors.node_delete",
            query={
                "processorId": processor_id,
                "workspace": workspace,
                "processorName": processor_name,
                "processorType": processor_type,
                "version": version,
            },
            **options,
        )

    async def help(self, name: str, **options: Unpack[RequestOptions]) -> str:
        """The help text of an app (its readme/help files)."""
        result = cast(StringResult, await self._call("processors.help", query={"name": name}, **options))
        return result.string_value

    async def run(
        self,
        *,
        name: str,
        workspace: str,
        params: Parameters | None = None,
        parent: str | None = None,
        notify: bool | None = None,
        **options: Unpack[RequestOptions],
    ) -> RunningProcessorViewModel:
        """Queue a run of an app in a workspace with JSON parameters; ``process_id`` is its process.

        A refused run (no access, unknown app or workspace, unpaid app ...) comes as status ERROR with a
        message and raises ``APIError`` carrying that message (the answer has no status to say more).
        """
        return cast(
            RunningProcessorViewModel,
            await self._call(
                "processors.run",
                query={"name": name, "workspace": workspace, "parent": parent, "notify": notify},
                body=_encoded(params),
                **options,
            ),
        )

    async def run_by_query(
        self,
        *,
        name: str,
        workspace: str,
        encoded_json: str | None = None,
        parent: str | None = None,
        notify: bool | None = None,
        **options: Unpack[RequestOptions],
    ) -> RunningProcessorViewModel:
        """As ``run``, with the JSON parameters in the query string (short parameters only)."""
        return cast(
            RunningProcessorViewModel,
            await self._call(
                "processors.run_by_query",
                query={
                    "name": name,
                    "workspace": workspace,
                    "encodedJson": encoded_json,
                    "parent": parent,
                    "notify": notify,
                },
                **options,
            ),
        )

    async def run_and_wait(
        self,
        *,
        name: str,
        workspace: str,
        params: Parameters | None = None,
        timeout: float | None = None,
        raise_on_failure: bool = True,
        on_update: Callable[[ProcessWorkspaceViewModel], None] | None = None,
        poll_interval: float = 0.5,
    ) -> ProcessWorkspaceViewModel:
        """Run an app and wait for its end; the final process (``ProcessFailedError`` on ERROR or STOPPED
        unless ``raise_on_failure=False``, ``ProcessTimeoutError`` after ``timeout`` seconds)."""
        started = await self.run(name=name, workspace=workspace, params=params)
        return await AsyncProcessesResource(self._client).wait(
            started.process_id,
            timeout=timeout,
            poll_interval=poll_interval,
            max_interval=2.0,
            raise_on_failure=raise_on_failure,
            on_update=on_update,
        )

    async def add_log(self, processworkspace: str, line: str, **options: Unpack[RequestOptions]) -> None:
        """Append one line to the log of a run (write access to the process needed)."""
        await self._call("processors.add_log", query={"processworkspace": processworkspace}, body=line, **options)

    async def count_logs(self, processworkspace: str, **options: Unpack[RequestOptions]) -> int:
        """How many lines the run's log has.  ``EmptyResultError`` (-1) when it is not accessible."""
        return cast(
            int, await self._call("processors.count_logs", query={"processworkspace": processworkspace}, **options)
        )

    async def list_logs(
        self,
        processworkspace: str,
        *,
        startrow: int | None = None,
        endrow: int | None = None,
        **options: Unpack[RequestOptions],
    ) -> builtins.list[ProcessorLogViewModel]:
        """Lines ``startrow`` to ``endrow`` (both included, from 0) of the run's log; all without a range."""
        return cast(
            builtins.list[ProcessorLogViewModel],
            await self._call(
                "processors.list_logs",
                query={"processworkspace": processworkspace, "startrow": startrow, "endrow": endrow},
                **options,
            ),
        )

    async def build_logs(self, processor_id: str, **options: Unpack[RequestOptions]) -> builtins.list[str]:
        """The lines of the app's last build (and later library or environment updates)."""
        return cast(
            builtins.list[str],
            await self._call("processors.build_logs", query={"processorId": processor_id}, **options),
        )

    @overload
    async def download(
        self,
        processor_id: str,
        *,
        to: None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes: ...

    @overload
    async def download(
        self,
        processor_id: str,
        *,
        to: str | os.PathLike[str],
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> Path: ...

    async def download(
        self,
        processor_id: str,
        *,
        to: str | os.PathLike[str] | None = None,
        on_progress: Progress | None = None,
        **options: Unpack[RequestOptions],
    ) -> bytes | Path:
        """The app's files as a zip: its bytes, or streamed to ``to`` (a file, or a folder: ``<name>.zip``)."""
        query = {"processorId": processor_id}
        if to is None:
            return cast(bytes, await self._call("processors.download", query=query, **options))
        return await download_to(
            self._client, "processors.download", query, to, f"{processor_id}.zip", on_progress, options
        )

    async def get_cwl(self, processor_name: str, **options: Unpack[RequestOptions]) -> bytes:
        """The app's CWL descriptor (``NoContentError`` when it has none)."""
        return cast(bytes, await self._call("processors.get_cwl", query={"processorName": processor_name}, **options))

    async def get_ui(self, name: str, **options: Unpack[RequestOptions]) -> Any:
        """The app's UI descriptor (a JSON document; ``{"tabs": []}`` by default)."""
        return await self._call("processors.get_ui", query={"name": name}, **options)

    async def save_ui(self, name: str, *, ui: Mapping[str, Any] | str, **options: Unpack[RequestOptions]) -> None:
        """Store the app's UI descriptor (a mapping or a JSON text)."""
        text = ui if isinstance(ui, str) else json.dumps(dict(ui))
        await self._call("processors.save_ui", query={"name": name}, body=text, **options)
