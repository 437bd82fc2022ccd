"""``wasdi processes ...``: queued and running operations (``client.processes``)."""

from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection
from ..errors import CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message, when
from ..waiting import wait_bar

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient

app = typer.Typer(name="processes", help="Processes: list, show, stop and wait for them.", no_args_is_help=True)

ProcessArg = Annotated[str, typer.Argument(metavar="PROCESS_ID", help="Process id (processObjId).")]

LIST_COLUMNS = (
    ("id", lambda p: p.process_id),
    ("operation", lambda p: p.operation_type),
    ("product", lambda p: p.product_name),
    ("status", lambda p: p.status),
    ("%", lambda p: p.progress_perc),
    ("created", lambda p: when(p.operation_date)),
    ("ended", lambda p: when(p.operation_end_date)),
)

SHOW_FIELDS = (
    ("id", lambda p: p.process_id),
    ("workspace", lambda p: p.workspace_id),
    ("user", lambda p: p.user_id),
    ("operation", lambda p: p.operation_type),
    ("subtype", lambda p: p.operation_sub_type),
    ("product", lambda p: p.product_name),
    ("status", lambda p: p.status),
    ("progress", lambda p: p.progress_perc),
    ("created", lambda p: when(p.operation_date)),
    ("started", lambda p: when(p.operation_start_date)),
    ("ended", lambda p: when(p.operation_end_date)),
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
    out.items(found, LIST_COLUMNS, id_of=lambda p: p.process_id, empty="No processes.")


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
    out.item(details, SHOW_FIELDS, id_of=lambda p: p.process_id)


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
    from wasdi_sdk.events.waits import wait_for_process

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client, wait_bar(f"Waiting for {process}") as advance:
        done = [0]

        def update(state: object) -> None:
            perc = int(getattr(state, "progress_perc", 0) or 0)
            advance(max(0, perc - done[0]))
            done[0] = max(done[0], perc)

        try:
            final = wait_for_process(client, process, timeout=timeout, poll_interval=interval, on_update=update)
        except EmptyResultError as e:
            raise CliError(f"no process '{process}' (or it is not accessible)") from e
        except ProcessTimeoutError as e:
            raise CliError(str(e)) from e
        except ProcessFailedError as e:
            out.item(e.process, SHOW_FIELDS, id_of=lambda p: p.process_id)
            raise CliError(str(e)) from e
    out.item(final, SHOW_FIELDS, id_of=lambda p: p.process_id)


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
    import contextlib
    import json as json_lib

    from wasdi_sdk import EmptyResultError
    from wasdi_sdk.events.updates import ProcessUpdates
    from wasdi_sdk.helpers import FINAL_STATES

    with connection.client(profile, base_url) as client, contextlib.ExitStack() as stack:
        try:
            client.processors.count_logs(process)  # the listing answers [] for an unknown process too
        except EmptyResultError as e:
            raise CliError(f"no process '{process}' (or it is not accessible)") from e
        next_row = first
        seen: tuple[str, int] | None = None
        updates = ProcessUpdates(client, None)  # sleeps plainly until --follow knows the process's workspace
        while True:
            state = None
            if follow:
                details = client.processes.get(process)
                state = (str(details.status or ""), int(details.progress_perc or 0))
                if state != seen:
                    message(f"[{details.operation_type or 'process'} {state[0]} {state[1]}%]")
                    seen = state
                if updates.workspace_id is None:  # the workspace's messages wake the loop when the process changes
                    updates = stack.enter_context(ProcessUpdates(client, details.workspace_id or ""))
            rows = client.processors.list_logs(process, startrow=next_row)
            for row in rows:
                if json:
                    typer.echo(json_lib.dumps(row.to_wire(), ensure_ascii=False))
                else:
                    typer.echo(f"{row.log_date or '':19}  {row.log_row or ''}")
                next_row = max(next_row, (row.row_number or 0) + 1)
            if not follow or (state is not None and state[0] in FINAL_STATES and not rows):
                break
            updates.sleep(interval, process)


def _not_found(process: str) -> CliError:
    return CliError(f"no process '{process}' (or it is not accessible)")


def _duration(ms: int | None) -> str:
    """Milliseconds as ``H:MM:SS``."""
    seconds = int(ms or 0) // 1000
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


def _json(data: object) -> None:
    import json as json_lib

    typer.echo(json_lib.dumps(data, indent=2, ensure_ascii=False))


STATS_FIELDS = (
    ("app", lambda s: s.application_name),
    ("runs", lambda s: s.runs),
    ("done", lambda s: s.done),
    ("error", lambda s: s.error),
    ("stopped", lambda s: s.stopped),
    ("mean run time", lambda s: _duration((s.medium_time or 0) * 1000)),
    ("users", lambda s: s.unique_users),
)
HISTORY_COLUMNS = (
    ("app", lambda h: h.processor_name),
    ("status", lambda h: h.status),
    ("workspace", lambda h: h.workspace_name),
    ("created", lambda h: when(h.operation_date)),
    ("started", lambda h: when(h.operation_start_date)),
    ("ended", lambda h: when(h.operation_end_date)),
)
TIME_COLUMNS = (
    ("subscription", lambda c: c.subscription_id),
    ("project", lambda c: c.project_id),
    ("user", lambda c: c.user_id),
    ("time", lambda c: _duration(c.computing_time)),
    ("ms", lambda c: c.computing_time),
)
SUMMARY_FIELDS = (
    ("yours waiting", lambda s: s.user_process_waiting),
    ("yours running", lambda s: s.user_process_running),
    ("others waiting", lambda s: s.all_process_waiting),
    ("others running", lambda s: s.all_process_running),
)
QUEUE_COLUMNS = (
    ("scheduler", lambda q: q.scheduler_name),
    ("operation", lambda q: q.operation_type),
    ("subtype", lambda q: q.operation_sub_type),
    ("created", lambda q: q.proc_created),
    ("ready", lambda q: q.proc_ready),
    ("running", lambda q: q.proc_running),
    ("waiting", lambda q: q.proc_waiting),
    ("unfinished", lambda q: q.number_of_unfinished_processes),
)
NODE_COLUMNS = (
    ("node", lambda n: n.node_code),
    ("processes", lambda n: n.number_of_processes),
    ("disk used %", lambda n: n.disk_percentage_used),
    ("disk free", lambda n: n.disk_absolute_available),
    ("memory used %", lambda n: n.memory_percentage_used),
    ("memory free", lambda n: n.memory_absolute_available),
    ("licenses", lambda n: n.licenses),
    ("metrics at", lambda n: n.timestamp_as_string),
)
SHORT_PAYLOAD = 1024
"""Payloads up to this many characters go in the query string, as the official library sends them."""


@app.command()
def stats(
    app_name: Annotated[str, typer.Argument(metavar="NAME", help="The app's name.")],
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
) -> None:
    """Run statistics of an app: runs by final state, mean run time, distinct users."""
    from wasdi_sdk import EmptyResultError

    out = Output(json_output=json)
    with connection.client(profile, base_url) as client:
        try:
            found = client.processes.app_stats(app_name)
        except EmptyResultError as e:
            raise CliError(f"no app '{app_name}' that you may read ('wasdi apps list' shows yours, the public ones "
                           "and those shared with you)") from e
    out.item(found, STATS_FIELDS, id_of=lambda s: s.application_name)


@app.command()
def history(
    app_name: Annotated[str, typer.Argument(metavar="NAME", help="The app's name.")],
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
) -> None:
    """Your runs of an app (everyone's for an admin), newest first, with their workspace."""
    out = Output(json_output=json)
    with connection.client(profile, base_url) as client:
        runs = client.processes.list_by_app(app_name)
    out.items(runs, HISTORY_COLUMNS, id_of=lambda h: h.workspace_id, empty=f"No runs of '{app_name}'.")


@app.command("running-time")
def running_time(
    by: Annotated[str, typer.Option("--by", metavar="user|project|subscription",
                                    help="Your total (or --user's), by project of your subscriptions, or by "
                                         "subscription.")] = "user",
    mine: Annotated[bool, typer.Option("--mine", help="With --by project: only your own time.")] = False,
    user: Annotated[str | None, typer.Option("--user", metavar="USER_ID",
                                             help="With --by user: another user (admins).")] = None,
    date_from: Annotated[str | None, typer.Option("--from", metavar="DATE",
                                                  help="With --by user: processes created from (ISO).")] = None,
    date_to: Annotated[str | None, typer.Option("--to", metavar="DATE",
                                                help="With --by user: processes created until (ISO).")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Computing time your processes used (milliseconds, and H:MM:SS in tables)."""
    from wasdi_sdk import EmptyResultError
    from wasdi_sdk.models import ComputingTimeViewModel

    from ..errors import USAGE

    kind = by.strip().lower()
    if kind not in ("user", "project", "subscription"):
        raise CliError(f"--by is user, project or subscription, not '{by}'", USAGE)
    if mine and kind != "project":
        raise CliError("--mine goes with --by project", USAGE)
    if kind != "user" and (user or date_from or date_to):
        raise CliError("--user, --from and --to go with --by user", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        if kind == "user":
            user_id = user or str(client.auth.check_session().user_id or "")
            try:
                total = client.processes.running_time_by_user(user_id, date_from=date_from, date_to=date_to)
            except EmptyResultError as e:
                raise CliError(f"no running time for '{user_id}': another user's is for admins only, and the "
                               "dates must be ISO instants") from e
            if json or quiet:
                typer.echo(str(total))
                return
            rows = [ComputingTimeViewModel(user_id=user_id, computing_time=total)]
        elif kind == "subscription":
            by_subscription = client.processes.running_time_by_subscription()
            if json:
                _json(by_subscription)
                return
            rows = [ComputingTimeViewModel(subscription_id=sub, project_id=project, computing_time=ms)
                    for sub, projects in by_subscription.items() for project, ms in projects.items()]
        elif mine:
            rows = client.processes.my_running_time_by_project()
        else:
            rows = client.processes.running_time_by_project()
    columns = [c for c in TIME_COLUMNS if not (kind == "user" and c[0] in ("subscription", "project"))
               and not (kind == "subscription" and c[0] == "user")]
    out.items(rows, columns, id_of=lambda c: c.subscription_id if kind == "subscription" else c.user_id,
              empty="No computing time.")


@app.command()
def summary(
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME",
                                                  help="Only this workspace (id, or its exact name).")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
) -> None:
    """How many processes wait and run: yours, and everyone else's."""
    out = Output(json_output=json)
    with connection.client(profile, base_url) as client:
        workspace_id = None
        if workspace:
            from .workspaces import resolve_workspace

            workspace_id, _ = resolve_workspace(client, workspace)
        counts = client.processes.summary(workspace=workspace_id)
    out.item(counts, SUMMARY_FIELDS, id_of=lambda s: s.user_process_running)


@app.command()
def queues(
    node: Annotated[str | None, typer.Option("--node", metavar="CODE", help="Node code (default: this "
                                                                           "server's).")] = None,
    status: Annotated[list[str] | None, typer.Option("--status", help="Only these states (repeat the "
                                                                      "option).")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
) -> None:
    """Unfinished processes of a node's queues by operation and state; the last row is the total."""
    out = Output(json_output=json)
    with connection.client(profile, base_url) as client:
        rows = client.processes.queues_status(node_code=node, statuses=[s.upper() for s in status or []] or None)
    out.items(rows, QUEUE_COLUMNS, id_of=lambda q: q.operation_type, empty="No queues.")


@app.command()
def nodes(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Compute nodes, best first, with their load, free disk and memory (admins)."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        rows = client.processes.nodes_by_score()
    out.items(rows, NODE_COLUMNS, id_of=lambda n: n.node_code, empty="No nodes (scores are for admins).")


@app.command()
def last(
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME", help="Workspace id, or its exact "
                                                  "name (default: all your processes).")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Your five newest processes, or a workspace's."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        if workspace:
            from .workspaces import resolve_workspace

            workspace_id, _ = resolve_workspace(client, workspace)
            found = client.processes.last_by_workspace(workspace_id)
        else:
            found = client.processes.last_by_user()
        found = connection.confirm_session_if_empty(client, found)
    out.items(found, LIST_COLUMNS, id_of=lambda p: p.process_id, empty="No processes.")


@app.command()
def status(
    processes: Annotated[list[str], typer.Argument(metavar="PROCESS_ID...", help="Process ids.")],
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
) -> None:
    """The state of one or more processes (ERROR for an unknown or inaccessible one)."""
    with connection.client(profile, base_url) as client:
        states = client.processes.get_statuses(list(processes))
    if json:
        _json(states)
        return
    from wasdi_sdk.models import ProcessWorkspaceViewModel

    rows = [ProcessWorkspaceViewModel(process_id=pid, status=state)
            for pid, state in zip(processes, states, strict=False)]
    Output().items(rows, (("id", lambda p: p.process_id), ("status", lambda p: p.status)),
                   id_of=lambda p: p.process_id)


@app.command("set-status")
def set_status(
    process: ProcessArg,
    state: Annotated[str, typer.Argument(metavar="STATUS", help="CREATED, RUNNING, WAITING, READY, DONE, ERROR "
                                                                "or STOPPED.")],
    perc: Annotated[int | None, typer.Option("--perc", metavar="N", min=0, max=100,
                                             help="Progress, 0 to 100.")] = None,
    notify: Annotated[bool, typer.Option("--notify", help="Tell the workspace's open clients.")] = False,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Set the state (and progress) of a process you can write to, as an app does while it runs."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        _exists(client, process)
        updated = client.processes.update_status(process, state.upper(), perc=perc, sendrabbit="1" if notify else None)
    out.item(updated, SHOW_FIELDS, id_of=lambda p: p.process_id)


@app.command("set-subpid")
def set_subpid(
    process: ProcessArg,
    pid: Annotated[int, typer.Argument(metavar="N", min=0, help="Operating-system pid of the subprocess.")],
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """Record the operating-system pid of the process's subprocess (so stopping it can kill that too)."""
    with connection.client(profile, base_url) as client:
        _exists(client, process)
        client.processes.set_sub_pid(process, pid)
    message(f"Process {process} runs as pid {pid}")


@app.command()
def payload(
    process: ProcessArg,
    new: Annotated[str | None, typer.Option("--set", metavar="FILE|JSON", help="Replace it: a JSON value, or a "
                                                                               "JSON file.")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """The payload of a process (the JSON a run leaves as its result); --set replaces it."""
    import json as json_lib
    from pathlib import Path

    from wasdi_sdk import EmptyResultError

    from ..errors import USAGE

    with connection.client(profile, base_url) as client:
        if new is None:
            try:
                typer.echo(client.processes.get_payload(process))
            except EmptyResultError as e:
                raise CliError(f"process '{process}' has no payload (or it is not accessible)") from e
            return
        text = Path(new).read_text() if not new.lstrip().startswith(("{", "[", '"')) and Path(new).is_file() else new
        try:
            json_lib.loads(text)
        except ValueError as e:
            raise CliError(f"--set is neither JSON nor a JSON file: {e}", USAGE) from e
        _exists(client, process)
        if len(text) <= SHORT_PAYLOAD:
            client.processes.set_payload_by_query(process, text)
        else:
            client.processes.set_payload(process, text)
    message(f"Set the payload of process {process}")


@app.command()
def params(process: ProcessArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """The parameters a run was started with, as JSON."""
    with connection.client(profile, base_url) as client:
        _exists(client, process)
        _json(client.processes.get_params(process))


def _exists(client: "WasdiClient", process: str) -> bool:
    """The process is known and accessible, else the error sentence."""
    from wasdi_sdk import EmptyResultError

    try:
        client.processes.get(process)
    except EmptyResultError as e:
        raise _not_found(process) from e
    return True
