"""``wasdi orgs ...``: organizations and their sharing (``client.organizations``)."""

from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name, named
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, message
from ..sharing import add_share_commands

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import OrganizationListViewModel

app = typer.Typer(name="orgs", help="Organizations: list, create, show, update, delete and share.",
                  no_args_is_help=True)

OrgArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="Organization id, or its exact name.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description.")]
AddressOpt = Annotated[str | None, typer.Option("--address", help="Postal address.")]
EmailOpt = Annotated[str | None, typer.Option("--email", help="Contact e-mail.")]
UrlOpt = Annotated[str | None, typer.Option("--url", help="Web site.")]

LIST_COLUMNS = (
    ("id", lambda o: o.organization_id),
    ("name", lambda o: o.name),
    ("owner", lambda o: o.owner_user_id),
    ("read-only", lambda o: o.read_only),
)

SHOW_FIELDS = (
    ("id", lambda o: o.organization_id),
    ("name", lambda o: o.name),
    ("owner", lambda o: o.user_id),
    ("description", lambda o: o.description),
    ("address", lambda o: o.address),
    ("email", lambda o: o.email),
    ("url", lambda o: o.url),
    ("shared with", lambda o: o.shared_users),
    ("read-only", lambda o: o.read_only),
)






def resolve_org(client: "WasdiClient", id_or_name: str) -> tuple[str, "OrganizationListViewModel | None"]:
    """The organization ``id_or_name`` identifies or names among yours (see ``lookup.by_id_or_name``)."""
    return by_id_or_name(client.organizations.list(), id_or_name, id_of=lambda o: o.organization_id,
                         name_of=lambda o: o.name, noun="organization",
                         fetch=client.organizations.get, listing="orgs list")




@app.command("list")
def list_(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Organizations you own or that are shared with you."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        organizations = client.organizations.list()
    out.items(organizations, LIST_COLUMNS, id_of=lambda o: o.organization_id, empty="No organizations.")


@app.command()
def show(organization: OrgArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Details of one organization."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        org_id, _ = resolve_org(client, organization)
        details = client.organizations.get(org_id)
    out.item(details, SHOW_FIELDS, id_of=lambda o: o.organization_id)


@app.command()
def create(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name of the organization (must be unique).")],
    description: DescriptionOpt = None,
    address: AddressOpt = None,
    email: EmailOpt = None,
    url: UrlOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create an organization; prints its id on stdout."""
    if not name.strip():
        raise CliError("NAME must not be empty", USAGE)
    with connection.client(profile, base_url) as client:
        created = client.organizations.create(name=name, description=description, address=address, email=email,
                                              url=url)
    if not created.message:
        raise CliError(f"the server did not return the id of the organization '{name}'")
    Output().value(created.message)
    message(f"Created organization '{name}'")


@app.command()
def update(
    organization: OrgArg,
    name: Annotated[str | None, typer.Option("--name", help="New name (must be unique).")] = None,
    description: DescriptionOpt = None,
    address: AddressOpt = None,
    email: EmailOpt = None,
    url: UrlOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change an organization's name or details (options not given keep their value)."""
    if name is None and description is None and address is None and email is None and url is None:
        raise CliError("nothing to change: give --name, --description, --address, --email or --url", USAGE)
    with connection.client(profile, base_url) as client:
        org_id, entry = resolve_org(client, organization)
        current_name = name if name is not None else client.organizations.get(org_id).name
        client.organizations.update(organization_id=org_id, name=current_name, description=description,
                                    address=address, email=email, url=url)
    message(f"Updated organization {named(org_id, entry)}")


@app.command()
def delete(organization: OrgArg, yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Delete an organization you own (its subscriptions are detached), or leave one shared with you."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        org_id, entry = resolve_org(client, organization)
        label = named(org_id, entry)
        if not yes and not typer.confirm(f"Delete organization {label}?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
        client.organizations.delete(org_id)
    message(f"Deleted organization {label}")


add_share_commands(app, noun="organization", group="organizations", id_param="organization",
                   resource_arg=OrgArg, resolve=resolve_org, label=named)
