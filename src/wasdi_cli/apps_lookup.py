"""Finding an app or a parameter template by what a person types: its id, or its name."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import CliError
from .lookup import by_id_or_name

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import DeployedProcessorViewModel, ProcessorParametersTemplateListViewModel

AppArg = Annotated[str, typer.Argument(metavar="APP", help="App id, or its name.")]
TemplateArg = Annotated[str, typer.Argument(metavar="TEMPLATE", help="Template id, or its name.")]


def resolve_app(client: WasdiClient, value: str) -> tuple[str, DeployedProcessorViewModel | None]:
    """The app ``value`` identifies or names, among the apps the user can see (names are unique, any case)."""
    return by_id_or_name(client.processors.list(), value, id_of=lambda p: p.processor_id,
                         name_of=lambda p: p.processor_name, noun="app", casefold=True)


def require_app(client: WasdiClient, value: str) -> DeployedProcessorViewModel:
    """As ``resolve_app``, and an unknown app is an error."""
    _, entry = resolve_app(client, value)
    if entry is None:
        from wasdi_sdk import EmptyResultError

        try:  # not in the user's list: the server may still know it by id (getprocessor)
            entry = client.processors.get(processor_id=value)
        except EmptyResultError:
            entry = None
    if entry is None or not entry.processor_id:
        raise CliError(f"no app '{value}' among yours, the public ones and those shared with you "
                       "(see `wasdi market list`)")
    return entry


def app_label(app_id: str, entry: Any) -> str:
    name = getattr(entry, "processor_name", None)
    return f"'{name}' ({app_id})" if name else app_id


def all_templates(client: WasdiClient, app: str | None = None) -> list[ProcessorParametersTemplateListViewModel]:
    """The templates the user has or is shared, of one app or of every app they can see."""
    apps = [require_app(client, app)] if app else client.processors.list()
    out: list[ProcessorParametersTemplateListViewModel] = []
    for entry in apps:
        out.extend(client.param_templates.list(str(entry.processor_id)))
    return out


def resolve_template(client: WasdiClient, value: str,
                     app: str | None = None) -> tuple[str, ProcessorParametersTemplateListViewModel | None]:
    """The template ``value`` identifies or names (names are per app: give ``app`` when one repeats)."""
    return by_id_or_name(all_templates(client, app), value, id_of=lambda t: t.template_id,
                         name_of=lambda t: t.name, noun="template",
                         describe=lambda t: f"{t.template_id} of app {t.processor_id}")


def template_label(template_id: str, entry: Any) -> str:
    name = getattr(entry, "name", None)
    return f"'{name}' ({template_id})" if name else template_id
