"""``wasdi apps share add|list|remove``: the sharing of apps, for the integrator to mount on ``wasdi apps``."""

import typer

from ..apps_lookup import AppArg, app_label, resolve_app
from ..sharing import add_share_commands


def add_app_share_commands(apps: typer.Typer) -> None:
    """Add ``share add|list|remove`` for apps (``client.processors.share_*``) to the ``apps`` Typer app."""
    add_share_commands(apps, noun="app", group="processors", id_param="processor_id", resource_arg=AppArg,
                       resolve=resolve_app, label=app_label)
