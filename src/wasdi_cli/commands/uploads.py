"""``wasdi uploads ...``: your file-transfer (upload) account and its files (``client.auth``).

The account's user and password open the server's SFTP service (``wasdi-server serve``, port 2222 by default).
"""

from typing import Annotated

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, ProfileOpt, YesOpt
from ..output import Output, message

app = typer.Typer(name="uploads", help="Your file-transfer account: status, create, files, new password, remove.",
                  no_args_is_help=True)

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
