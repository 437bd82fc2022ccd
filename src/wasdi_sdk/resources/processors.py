"""``client.processors``: the run logs of processes (/processors/logs/...) and the store methods."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from .._resource import APIResource, RequestOptions
from ..models import ProcessorLogViewModel
from .processor_store import ProcessorStoreMethods


class ProcessorsResource(ProcessorStoreMethods, APIResource):
    """/processors (the run-log endpoints; the store, sharing and payments in ``ProcessorStoreMethods``)."""

    def add_log(self, processworkspace: str, line: str, **options: Unpack[RequestOptions]) -> None:
        """Append one line to the log of a run (write access to the process needed)."""
        self._call("processors.add_log", query={"processworkspace": processworkspace}, body=line, **options)

    def count_logs(self, processworkspace: str, **options: Unpack[RequestOptions]) -> int:
        """How many lines the run's log has.  ``EmptyResultError`` (-1) when it is not accessible."""
        return cast(int, self._call("processors.count_logs", query={"processworkspace": processworkspace},
                                    **options))

    def list_logs(self, processworkspace: str, *, startrow: int | None = None, endrow: int | None = None,
                  **options: Unpack[RequestOptions]) -> builtins.list[ProcessorLogViewModel]:
        """Lines ``startrow`` to ``endrow`` (both included, from 0) of the run's log; all without a range."""
        return cast(builtins.list[ProcessorLogViewModel], self._call(
            "processors.list_logs", query={"processworkspace": processworkspace, "startrow": startrow,
                                           "endrow": endrow}, **options))
