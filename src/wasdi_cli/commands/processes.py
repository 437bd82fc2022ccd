"""``wasdi processes ...``: queued and running operations (``client.processes``)."""

from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection
from ..errors import CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message, progress

if TYPE_CHECKING:
    pass

app = typer.Typer(name="processes", help="Processes: list, show, stop and wait for them.", no_args_is_help=True)

ProcessArg = Annotated[str, typer.Argument(metavar="PROCESS_ID", help="Process id (processObjId).")]

LIST_COLUMNS = (
    ("id", lambda p: p.process_obj_id),
    ("operation", lambda p: p.operation_type),
    ("product", lambda p: p.product_name),
    ("status", lambda p: p.status),
    ("%", lambda p: p.progress_perc),
    ("created", lambda p: p.operation_date),
    ("ended", lambda p: p.operation_end_date),
)

SHOW_FIELDS = (
    ("id", lambda p: p.process_obj_id),
    ("workspace", lambda p: p.workspace_id),
    ("user", lambda p: p.user_id),
    ("operation", lambda p: p.operation_type),
    ("subtype", lambda p: p.operation_sub_type),
    ("product", lambda p: p.product_name),
    ("status", lambda p: p.status),
    ("progress", lambda p: p.progress_perc),
    ("created", lambda p: p.operation_date),
    ("started", lambda p: p.operation_start_date),
    ("ended", lambda p: p.operation_end_date),
    ("size", lambda p: p.file_size),
    ("payload", lambda p: p.payload),
)



@app.command("list")
def list_(
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME", help="Workspace id, or its exact "
                                                  "name (default: all your processes).")] = None,
    status: Annotated[str | None, typer.Option("--status", help="Only this state (DONE, RUNNING ...).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most this many, newest first.")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Processes of a workspace, or all of yours; newest first."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        if workspace:
            from .workspaces import resolve_workspace

            workspace_id, _ = resolve_workspace(client, workspace)
            found = client.processes.list_by_workspace(workspace_id, status=status, startindex=0 if limit else None,
                                                       endindex=limit)
        else:
            found = client.processes.list_by_user()
            if status:
                found = [p for p in found if p.status == status.upper()]
            found = found[:limit] if limit else found
        found = connection.confirm_session_if_empty(client, found)
    out.items(found, LIST_COLUMNS, id_of=lambda p: p.process_obj_id, empty="No processes.")


@app.command()
def show(process: ProcessArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Details of one process."""
    from wasdi_sdk import EmptyResultError

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        try:
            details = client.processes.get(process)
        except EmptyResultError as e:
            raise CliError(f"no process '{process}' (or it is not accessible)") from e
    out.item(details, SHOW_FIELDS, id_of=lambda p: p.process_obj_id)


@app.command()
def stop(
    process: ProcessArg,
    only_this: Annotated[bool, typer.Option("--only-this", help="Leave its child processes running.")] = False,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """Stop a queued or running process (and its children)."""
    with connection.client(profile, base_url) as client:
        client.processes.stop(process, tree_kill=not only_this)
        status = client.processes.get_status(process)
    message(f"Process {process} is {status}")


@app.command()
def wait(
    process: ProcessArg,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up after this many seconds.")] = None,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="First polling interval, seconds.")] = 1.0,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Wait until a process is DONE; exits 1 if it ends in ERROR or STOPPED."""
    from wasdi_sdk import EmptyResultError, ProcessFailedError, ProcessTimeoutError

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client, progress(f"Waiting for {process}", total=100) as advance:
        done = [0]

        def update(state: object) -> None:
            perc = int(getattr(state, "progress_perc", 0) or 0)
            advance(max(0, perc - done[0]))
            done[0] = max(done[0], perc)

        try:
            final = client.wait_for_process(process, timeout=timeout, poll_interval=interval, on_update=update)
        except EmptyResultError as e:
            raise CliError(f"no process '{process}' (or it is not accessible)") from e
        except ProcessTimeoutError as e:
            raise CliError(str(e)) from e
        except ProcessFailedError as e:
            out.item(e.process, SHOW_FIELDS, id_of=lambda p: p.process_obj_id)
            raise CliError(str(e)) from e
    out.item(final, SHOW_FIELDS, id_of=lambda p: p.process_obj_id)


@app.command()
def logs(
    process: ProcessArg,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new lines until it ends.")] = False,
    first: Annotated[int, typer.Option("--from", min=0, help="First line to show (from 0).")] = 0,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="Polling interval with --follow.")] = 2.0,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
) -> None:
    """The log lines of a run (what its processor wrote with wasdiLog).

    With --follow, the process's state and progress changes are shown too (on stderr), so a queued
    operation that writes no log (an import, a publish ...) is not silence.
    """
    import json as json_lib
    import time

    from wasdi_sdk import EmptyResultError
    from wasdi_sdk.helpers import FINAL_STATES

    with connection.client(profile, base_url) as client:
        try:
            client.processors.count_logs(process)  # the listing answers [] for an unknown process too
        except EmptyResultError as e:
            raise CliError(f"no process '{process}' (or it is not accessible)") from e
        next_row = first
        seen: tuple[str, int] | None = None
        while True:
            state = None
            if follow:
                details = client.processes.get(process)
                state = (str(details.status or ""), int(details.progress_perc or 0))
                if state != seen:
                    message(f"[{details.operation_type or 'process'} {state[0]} {state[1]}%]")
                    seen = state
            rows = client.processors.list_logs(process, startrow=next_row)
            for row in rows:
                if json:
                    typer.echo(json_lib.dumps(row.to_wire(), ensure_ascii=False))
                else:
                    typer.echo(f"{row.log_date or '':19}  {row.log_row or ''}")
                next_row = max(next_row, (row.row_number or 0) + 1)
            if not follow or (state is not None and state[0] in FINAL_STATES and not rows):
                break
            time.sleep(interval)
