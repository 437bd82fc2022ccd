"""``wasdi uploads ...``: your file-transfer (upload) account and its files (``client.auth``), and their ingestion
into a workspace (``client.files.ingest_upload``).

The account's user and password open the server's SFTP service (``wasdi-server serve``, port 2222 by default).
"""

from typing import Annotated

import typer

from .. import connection, output
from ..errors import ERROR, USAGE, CliError
from ..options import BaseUrlOpt, ProfileOpt, WorkspaceOpt, YesOpt
from ..output import Output, message
from ..waiting import wait_for

app = typer.Typer(name="uploads", help="Your file-transfer account: status, create, files, ingest, new password, "
                                       "remove.", no_args_is_help=True)

EmailArg = Annotated[str, typer.Argument(metavar="EMAIL", help="Where the credentials are mailed.")]


@app.command()
def status(profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Whether you have a file-transfer account: prints yes or no; exit code 0 or 1."""
    with connection.client(profile, base_url) as client:
        found = client.auth.exists_upload_account()
    Output().value("yes" if found else "no")
    if not found:
        raise typer.Exit(1)


@app.command()
def create(email: EmailArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Create your file-transfer account; its user and password (for the server's SFTP service) are mailed to EMAIL."""
    with connection.client(profile, base_url) as client:
        client.auth.create_upload_account(email=email)
    message(f"Created the file-transfer account; its credentials are mailed to {email}")


@app.command()
def files(profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Names of the files in your upload folder, one a line."""
    with connection.client(profile, base_url) as client:
        names = client.auth.list_upload_files()
    if not names:
        message("No uploaded files.")
    for name in names:
        Output().value(name)


@app.command()
def ingest(
    files: Annotated[list[str] | None, typer.Argument(metavar="FILE...", help="Names of files in your upload "
                                                      "folder ('wasdi uploads files' lists them).",
                                                      show_default=False)] = None,
    all_files: Annotated[bool, typer.Option("--all", help="Every file of your upload folder.")] = False,
    workspace: WorkspaceOpt = None,
    style: Annotated[str | None, typer.Option("--style", help="Style of the products' map layers.")] = None,
    platform: Annotated[str | None, typer.Option("--platform", help="Mission, e.g. Sentinel-2 (default: inferred "
                                                                    "from the name).")] = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until each file is ingested.")] = True,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting for each file after "
                                                                           "this many seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Move files you uploaded over SFTP into a workspace and ingest them as its products; prints each product's
    file name (with --no-wait, its INGEST process id).  A file that fails is named on stderr, the others go on,
    and the command then exits 1."""
    from wasdi_sdk import NotFoundError

    if bool(files) == all_files:
        raise CliError("give the FILE names to ingest, or --all for every file of your upload folder", USAGE)
    failed: list[str] = []
    with connection.client(profile, base_url) as client:
        from .workspaces import resolve_workspace

        workspace_id, _ = resolve_workspace(client, workspace)
        names = list(files or []) if not all_files else client.auth.list_upload_files()
        if not names:
            message("No uploaded files to ingest: upload them over SFTP first ('wasdi uploads status' says "
                    "whether you have an account)")
            return
        for name in names:
            try:
                started = client.files.ingest_upload(name, workspace_id, style=style, platform=platform)
            except NotFoundError:
                failed.append(name)
                message(f"Failed: {name}: no such file in your upload folder ('wasdi uploads files' lists them)")
                continue
            process_id = str(started.string_value or "")
            if not wait:
                Output().value(process_id)
                message(f"Ingesting {name}: process {process_id}")
                continue
            try:
                wait_for(client, process_id, f"Ingesting {name}", timeout, f"the ingestion of {name} failed")
            except CliError as e:
                if e.code != ERROR:
                    raise
                failed.append(name)
                message(f"Failed: {name}: {e.message}")
                continue
            Output().value(name)
            message(f"Ingested {name}")
    if failed:
        raise CliError(f"{len(failed)} of {len(names)} files were not ingested: {', '.join(failed)}")


@app.command("reset-password")
def reset_password(email: EmailArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Have a new file-transfer password mailed to EMAIL (the old one stops working, open SFTP sessions end)."""
    with connection.client(profile, base_url) as client:
        client.auth.update_upload_password(email=email)
    message(f"A new file-transfer password is mailed to {email}")


@app.command()
def remove(yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Remove your file-transfer account (open SFTP sessions end; the files stay until ingested or deleted)."""
    if not yes:
        if not output.stdin_is_tty():
            raise CliError("refusing to remove without confirmation: stdin is not a terminal; pass --yes", USAGE)
        if not typer.confirm("Remove your file-transfer account?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
    with connection.client(profile, base_url) as client:
        client.auth.remove_upload_account()
    message("Removed the file-transfer account")
