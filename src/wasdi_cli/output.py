"""The one output sink of every command.

Data goes to stdout, messages to stderr.  A command hands its result to ``Output``: with
``--json`` stdout gets exactly the model's wire dict (``model.to_wire()``; a list becomes a JSON
array) and nothing else; with ``-q`` the ids only, one a line; otherwise a table.  Progress bars
are drawn on stderr, and only when it is a terminal.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import typer

from .errors import USAGE, CliError

# Non-terminals get a wide virtual screen, so a table piped to a file is never wrapped.
PIPE_WIDTH = 4096


class WireModel(Protocol):
    def to_wire(self, *, keep_none: bool = False) -> dict[str, Any]: ...


Column = tuple[str, Callable[[Any], Any]]
"""A table column: its header and how to read the cell from the model."""


def stdout_is_tty() -> bool:
    return sys.stdout.isatty()


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()


def stdin_is_tty() -> bool:
    """Whether a person can answer a prompt (tests replace this)."""
    return sys.stdin.isatty()


def message(text: str) -> None:
    """A message for the person at the terminal (stderr)."""
    typer.echo(text, err=True)


def cell(value: Any) -> str:
    """A value as a table cell."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return ", ".join(cell(v) for v in value)
    return str(value)


DATE_FORMAT = "%Y-%m-%d %H:%M:%S UTC"
"""The one way a table shows a point in time (every table, whatever the server sent)."""

_JAVA_DATE = "%a %b %d %H:%M:%S %Z %Y"  # what some endpoints send: Java's Date.toString()


def when(value: Any) -> str:
    """A point in time as ``YYYY-MM-DD HH:MM:SS UTC``: from epoch milliseconds, a ``datetime``, or the texts the
    service sends (ISO 8601, ``YYYY-MM-DD HH:MM:SS``, Java's ``Tue Jan 02 10:00:00 UTC 2024``); anything else as
    it is."""
    if value is None or value == "":
        return ""
    moment: datetime | None = None
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
    elif (isinstance(value, int | float) and not isinstance(value, bool)) or \
            (isinstance(value, str) and value.strip().lstrip("-").replace(".", "", 1).isdigit()):
        try:
            moment = datetime.fromtimestamp(float(value) / 1000, tz=UTC)
        except (OverflowError, OSError, ValueError):
            return str(value)
    elif isinstance(value, str):
        text = value.strip()
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            try:
                moment = datetime.strptime(text, _JAVA_DATE)
            except ValueError:
                moment = None
        if moment is not None and moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)  # the service's dates are UTC
    if moment is None:
        return str(value)
    return moment.astimezone(UTC).strftime(DATE_FORMAT)


class Output:
    """Where a command's result goes: ``--json``, ``-q`` or a table."""

    def __init__(self, *, json_output: bool = False, quiet: bool = False) -> None:
        if json_output and quiet:
            raise CliError("--json and --quiet cannot be used together", USAGE)
        self.json = json_output
        self.quiet = quiet

    # -- data (stdout) ---------------------------------------------------------------------
    def items(self, models: Sequence[WireModel], columns: Sequence[Column], *,
              id_of: Callable[[Any], Any], empty: str = "nothing to show") -> None:
        """A list: a JSON array of wire dicts, the ids, or a table with one row per model.  An empty list is
        shown only once the command's session is known to be valid (an unknown session also lists nothing)."""
        if not models:
            from .connection import confirm_session_of_empty_listing  # here: connection imports this module's kin

            confirm_session_of_empty_listing()
        if self.json:
            self._json([m.to_wire() for m in models])
        elif self.quiet:
            for m in models:
                typer.echo(cell(id_of(m)))
        elif not models:
            message(empty)
        else:
            self._table([header for header, _ in columns], [[cell(read(m)) for _, read in columns] for m in models])

    def item(self, model: WireModel, fields: Sequence[Column], *, id_of: Callable[[Any], Any]) -> None:
        """One model: its wire dict, its id, or a two-column table of its fields."""
        if self.json:
            self._json(model.to_wire())
        elif self.quiet:
            typer.echo(cell(id_of(model)))
        else:
            self._table(["field", "value"], [[label, cell(read(model))] for label, read in fields], header=False)

    def value(self, text: str) -> None:
        """A single value that scripts read (a new id ...): printed as is in every mode."""
        typer.echo(text)

    def _json(self, data: Any) -> None:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))

    def _table(self, headers: Sequence[str], rows: Sequence[Sequence[str]], *, header: bool = True) -> None:
        from rich import box
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        tty = stdout_is_tty()
        table = Table(box=box.SIMPLE_HEAD if header else box.SIMPLE, show_header=header, show_edge=False,
                      pad_edge=False, header_style="bold" if tty else "")
        for name in headers:
            table.add_column(name, overflow="fold")
        for row in rows:
            table.add_row(*(Text(value) for value in row))  # Text: a name like "[b]x" is not markup
        if tty:
            Console(file=sys.stdout).print(table)
            return
        # Piped: no wrapping, no colour, no trailing blanks, so `cut`/`awk` see one row a line.
        console = Console(file=io.StringIO(), width=PIPE_WIDTH, color_system=None)
        with console.capture() as captured:
            console.print(table)
        for line in captured.get().splitlines():
            typer.echo(line.rstrip())


@contextmanager
def progress(description: str, total: float | None = None, *,
             unit: str = "bytes") -> Iterator[Callable[[float], None]]:
    """A progress bar on stderr when it is a terminal; yields ``advance(amount)``.  ``unit`` is what it counts:
    ``"bytes"`` (sizes, speed, time left) or ``"percent"`` (a run's or a process's progress, out of 100).

    >>> with progress("Uploading scene.tif", total=size) as advance:
    ...     client.products.upload(..., on_progress=advance)
    """
    if not stderr_is_tty():
        yield lambda amount: None
        return
    from rich.console import Console
    from rich.progress import Progress

    bar = Progress(*progress_columns(unit), console=Console(file=sys.stderr), transient=True)
    with bar:
        task = bar.add_task(description, total=total)
        yield lambda amount: bar.advance(task, amount)


def progress_columns(unit: str) -> list[Any]:
    """The columns of a bar counting ``unit``: bytes show sizes and time left, a percentage shows ``13%``."""
    from rich.progress import BarColumn, DownloadColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    if unit == "percent":
        return [TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                TimeElapsedColumn()]
    if unit == "bytes":
        return [TextColumn("{task.description}"), BarColumn(), DownloadColumn(), TimeRemainingColumn()]
    raise ValueError(f"a progress bar counts bytes or percent, not {unit!r}")


def save_download(out: str | None, label: str, fetch: Callable[..., Any], default: Path | None = None) -> None:
    """Write what ``fetch`` downloads where ``--output`` says: ``-`` for stdout, a file, or a folder.

    ``fetch()`` returns the bytes; ``fetch(to=path, on_progress=advance)`` saves them and returns the file
    written (the SDK's download methods work both ways).  Without ``out`` the file goes to ``default``, else
    into the current folder under the name the server gives it.
    """
    if out == "-":
        sys.stdout.buffer.write(fetch())
        sys.stdout.flush()
        return
    with progress(f"Downloading {label}") as advance:
        path = fetch(to=Path(out) if out else default or Path.cwd(), on_progress=advance)
    message(f"Saved {path}")
