"""``wasdi projects ...``: projects and the active project (``client.projects``)."""

from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name, named
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, message
from .subscriptions import resolve_subscription

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import ProjectListViewModel

app = typer.Typer(name="projects", help="Projects: list, create, show, update, delete and activate.",
                  no_args_is_help=True)

ProjectArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="Project id, or its exact name.")]
SubscriptionOpt = Annotated[str | None, typer.Option("--subscription", "-s",
                                                     help="Subscription id or exact name.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description.")]

LIST_COLUMNS = (
    ("id", lambda p: p.project_id),
    ("name", lambda p: p.name),
    ("subscription", lambda p: p.subscription_name),
    ("active", lambda p: p.active_project),
    ("description", lambda p: p.description),
)

SHOW_FIELDS = (
    ("id", lambda p: p.project_id),
    ("name", lambda p: p.name),
    ("subscription", lambda p: p.subscription_id),
    ("description", lambda p: p.description),
    ("active", lambda p: p.active_project),
)



def resolve_project(client: "WasdiClient", id_or_name: str) -> tuple[str, "ProjectListViewModel | None"]:
    """The project ``id_or_name`` identifies or names among yours.

    Projects are looked up per subscription, because listing them all (``/projects/byuser``) would make
    one active as a side effect.
    """
    projects = [p for sub in client.subscriptions.list() if sub.subscription_id
                for p in client.projects.list_by_subscription(sub.subscription_id)]
    return by_id_or_name(projects, id_or_name, id_of=lambda p: p.project_id, name_of=lambda p: p.name,
                         noun="project", describe=lambda p: f"{p.project_id} in '{p.subscription_name}'",
                         fetch=client.projects.get, listing="projects list")




@app.command("list")
def list_(
    subscription: SubscriptionOpt = None,
    valid: Annotated[bool, typer.Option("--valid", help="Only projects of valid subscriptions.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Projects of your subscriptions (or of one subscription)."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        if subscription is not None:
            subscription_id, _ = resolve_subscription(client, subscription)
            projects = client.projects.list_by_subscription(subscription_id)
        else:
            projects = client.projects.list(valid=valid)
    out.items(projects, LIST_COLUMNS, id_of=lambda p: p.project_id, empty="No projects.")


@app.command()
def show(project: ProjectArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Details of one project."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        project_id, _ = resolve_project(client, project)
        details = client.projects.get(project_id)
    out.item(details, SHOW_FIELDS, id_of=lambda p: p.project_id)


@app.command()
def create(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name (a name taken in the subscription gets a "
                                                            "'(n)' suffix).")],
    subscription: SubscriptionOpt = None,
    description: DescriptionOpt = None,
    activate: Annotated[bool, typer.Option("--activate", help="Make it your active project.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create a project in one of your subscriptions; prints its id on stdout."""
    if not name.strip():
        raise CliError("NAME must not be empty", USAGE)
    if not subscription:
        raise CliError("give the subscription with --subscription", USAGE)
    with connection.client(profile, base_url) as client:
        subscription_id, _ = resolve_subscription(client, subscription)
        created = client.projects.create(subscription_id=subscription_id, name=name, description=description,
                                         active_project=True if activate else None)
    if not created.message:
        raise CliError(f"the server did not return the id of the project '{name}'")
    Output().value(created.message)
    message(f"Created project '{name}'" + (" (now active)" if activate else ""))


@app.command()
def update(
    project: ProjectArg,
    name: Annotated[str | None, typer.Option("--name", help="New name.")] = None,
    description: DescriptionOpt = None,
    active: Annotated[bool | None, typer.Option("--activate/--deactivate",
                                                help="Make it active, or stop it being active.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change a project (options not given keep their value)."""
    if name is None and description is None and active is None:
        raise CliError("nothing to change: give --name, --description, --activate or --deactivate", USAGE)
    with connection.client(profile, base_url) as client:
        project_id, entry = resolve_project(client, project)
        client.projects.update(project_id=project_id, name=name, description=description, active_project=active)
    message(f"Updated project {named(project_id, entry)}")


@app.command()
def activate(
    project: Annotated[str | None, typer.Argument(metavar="[ID_OR_NAME]",
                                                  help="The project to make active; omit with --clear.")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Have no active project.")] = False,
    user: Annotated[str | None, typer.Option("--user", help="Whose active project (admins; default: you).")]
    = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Make a project (and its subscription) the active one, or clear it with --clear."""
    if (project is None) == (not clear):
        raise CliError("give a project, or --clear (not both)", USAGE)
    with connection.client(profile, base_url) as client:
        if clear:
            client.projects.set_active(target=user)
            message("Cleared the active project")
            return
        assert project is not None
        project_id, entry = resolve_project(client, project)
        client.projects.set_active(project=project_id, target=user)
    message(f"Project {named(project_id, entry)} is now active" + (f" for {user}" if user else ""))


@app.command()
def delete(project: ProjectArg, yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Delete a project."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        project_id, entry = resolve_project(client, project)
        label = named(project_id, entry)
        if not yes and not typer.confirm(f"Delete project {label}?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
        client.projects.delete(project_id)
    message(f"Deleted project {label}")
