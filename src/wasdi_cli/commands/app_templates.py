"""``wasdi apps templates ...``: parameter templates of apps (``client.param_templates``).

The integrator mounts ``app`` under ``wasdi apps``; it is a complete Typer app on its own.
"""

import json as jsonlib
from pathlib import Path
from typing import Annotated

import typer

from .. import connection, output
from ..apps_lookup import AppArg, TemplateArg, require_app, resolve_template, template_label
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, message, when
from ..sharing import add_share_commands

app = typer.Typer(name="templates", help="Parameter templates of apps: list, show, add, update, delete, share.",
                  no_args_is_help=True)

ParamsOpt = Annotated[str | None, typer.Option("--params", metavar="FILE|JSON",
                                               help="The parameters: a JSON file, or JSON text.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="What the template is for.")]
InAppOpt = Annotated[str | None, typer.Option("--app", metavar="APP",
                                              help="Look the template name up in this app only.")]

LIST_COLUMNS = (
    ("id", lambda t: t.template_id),
    ("name", lambda t: t.name),
    ("owner", lambda t: t.user_id),
    ("updated", lambda t: when(t.update_date)),
    ("read-only", lambda t: t.read_only),
)
SHOW_FIELDS = (
    ("id", lambda t: t.template_id),
    ("name", lambda t: t.name),
    ("app", lambda t: t.processor_id),
    ("owner", lambda t: t.user_id),
    ("description", lambda t: t.description),
    ("created", lambda t: when(t.creation_date)),
    ("updated", lambda t: when(t.update_date)),
    ("read-only", lambda t: t.read_only),
    ("parameters", lambda t: t.json_parameters),
)


def read_params(value: str) -> str:
    """JSON text from a file path or from the text itself; a usage error when it is not JSON."""
    path = Path(value)
    text = path.read_text(encoding="utf-8") if path.is_file() else value
    try:
        jsonlib.loads(text)
    except ValueError as e:
        raise CliError(f"--params is neither a JSON file nor JSON text: {e}", USAGE) from e
    return text


@app.command("list")
def list_(app_ref: AppArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Your templates of an app and those shared with you."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        found = client.param_templates.list(str(entry.processor_id))
    out.items(found, LIST_COLUMNS, id_of=lambda t: t.template_id, empty=f"No templates of {entry.processor_name}.")


@app.command()
def show(template: TemplateArg, in_app: InAppOpt = None, profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
         json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """A template with its parameters."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        template_id, _ = resolve_template(client, template, in_app)
        detail = client.param_templates.get(template_id)
    out.item(detail, SHOW_FIELDS, id_of=lambda t: t.template_id)


@app.command()
def add(app_ref: AppArg, name: Annotated[str, typer.Argument(metavar="NAME", help="Template name.")],
        params: ParamsOpt = None, description: DescriptionOpt = None, profile: ProfileOpt = None,
        base_url: BaseUrlOpt = None) -> None:
    """Save parameters of an app as a named template."""
    text = read_params(params) if params is not None else None
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        client.param_templates.create(processor_id=entry.processor_id, name=name, description=description,
                                      json_parameters=text)
    message(f"Saved template '{name}' of {entry.processor_name}")


@app.command()
def update(template: TemplateArg, in_app: InAppOpt = None,
           name: Annotated[str | None, typer.Option("--name", help="A new name.")] = None,
           params: ParamsOpt = None, description: DescriptionOpt = None, profile: ProfileOpt = None,
           base_url: BaseUrlOpt = None) -> None:
    """Change a template's name, description or parameters (what you leave out stays)."""
    if name is None and params is None and description is None:
        raise CliError("nothing to change: give --name, --params or --description", USAGE)
    text = read_params(params) if params is not None else None
    with connection.client(profile, base_url) as client:
        template_id, entry = resolve_template(client, template, in_app)
        current = client.param_templates.get(template_id)
        client.param_templates.update(
            template_id=template_id, processor_id=current.processor_id, name=name or current.name,
            description=current.description if description is None else description,
            json_parameters=current.json_parameters if text is None else text)
    message(f"Updated template {template_label(template_id, entry)}")


@app.command()
def delete(template: TemplateArg, in_app: InAppOpt = None, yes: YesOpt = False, profile: ProfileOpt = None,
           base_url: BaseUrlOpt = None) -> None:
    """Delete a template you own (or stop having one shared with you)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        template_id, entry = resolve_template(client, template, in_app)
        label = template_label(template_id, entry)
        if not yes and not typer.confirm(f"Delete template {label}?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
        client.param_templates.delete(template_id)
    message(f"Deleted template {label}")


add_share_commands(app, noun="template", group="param_templates", id_param="processor_parameters_template",
                   resource_arg=TemplateArg, resolve=resolve_template, label=template_label)
