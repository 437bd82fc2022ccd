"""Options shared by the commands, as ``Annotated`` aliases: one definition, one help text."""

from __future__ import annotations

from typing import Annotated

import typer

CONNECTION = "Connection"

ProfileOpt = Annotated[
    str | None,
    typer.Option("--profile", "-p", envvar="WASDI_PROFILE", show_envvar=True, rich_help_panel=CONNECTION,
                 help="Profile of profiles.toml to use (default: the file's default, else 'default')."),
]
BaseUrlOpt = Annotated[
    str | None,
    typer.Option("--base-url", envvar="WASDI_BASE_URL", show_envvar=True, rich_help_panel=CONNECTION,
                 help="Server base URL (default: the profile's, else http://127.0.0.1:8080)."),
]
JsonOpt = Annotated[
    bool,
    typer.Option("--json", help="Print the result as JSON (the service's wire format) on stdout."),
]
QuietOpt = Annotated[
    bool,
    typer.Option("--quiet", "-q", help="Print ids only, one a line."),
]
YesOpt = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Do not ask for confirmation."),
]
DownloadOutOpt = Annotated[
    str | None,
    typer.Option("--output", "-o", metavar="PATH",
                 help="Where to write it: a file, a folder, or - for stdout (default: the current folder, "
                      "under the file's own name)."),
]
PublicOpt = Annotated[
    bool | None,
    typer.Option("--public/--private", help="Visible to every user, or not."),
]
"""``None`` when neither is given: an update leaves the visibility as it is, a creation makes it private."""
WorkspaceOpt = Annotated[
    str | None,
    typer.Option("--ws", metavar="ID_OR_NAME",
                 help="Workspace id, or its exact name (default: the profile's, set by 'wasdi ws use')."),
]
"""``None`` when not given: ``resolve_workspace`` then takes the profile's default workspace."""
