"""``wasdi subscriptions ...``: subscriptions, their sharing and purchase (``client.subscriptions``)."""

import enum
from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name, named
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, message, when
from ..sharing import add_share_commands

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import SubscriptionListViewModel

app = typer.Typer(name="subscriptions", help="Subscriptions: list, active, count, create, show, update, delete, "
                                              "share, buy and confirm.", no_args_is_help=True)

SubscriptionArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="Subscription id, or its exact name.")]
NameOpt = Annotated[str | None, typer.Option("--name", help="Name (a name you already use gets a '(n)' suffix).")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description.")]
StartOpt = Annotated[str | None, typer.Option("--start", help="Start: ISO date (2025-01-31 or "
                                                             "2025-01-31T08:00:00Z) or epoch ms; default now.")]
EndOpt = Annotated[str | None, typer.Option("--end", help="End (admins; default: follows the type).")]
DaysOpt = Annotated[int | None, typer.Option("--days", min=1, help="Length in days (admins; instead of --end).")]
OrgOpt = Annotated[str | None, typer.Option("--org", metavar="ID_OR_NAME", help="Organization (id or name) whose "
                                                          "members may use it ('' detaches it).")]


def _org_id(client: "WasdiClient", org: str | None) -> str | None:
    """The id of the organization ``org`` names ('' stays '': it detaches)."""
    if not org:
        return org
    from .organizations import resolve_org

    return resolve_org(client, org)[0]

LIST_COLUMNS = (
    ("id", lambda s: s.subscription_id),
    ("name", lambda s: s.name),
    ("type", lambda s: s.type_id),
    ("owner", lambda s: s.owner_user_id),
    ("start", lambda s: when(s.start_date)),
    ("end", lambda s: when(s.end_date)),
    ("paid", lambda s: s.buy_success),
    ("reason", lambda s: s.reason),
    ("read-only", lambda s: s.read_only),
)

SHOW_FIELDS = (
    ("id", lambda s: s.subscription_id),
    ("name", lambda s: s.name),
    ("description", lambda s: s.description),
    ("type", lambda s: s.type_id),
    ("type name", lambda s: s.type_name),
    ("owner", lambda s: s.user_id),
    ("start", lambda s: when(s.start_date)),
    ("end", lambda s: when(s.end_date)),
    ("days", lambda s: s.duration_days),
    ("paid", lambda s: s.buy_success),
    ("bought", lambda s: when(s.buy_date)),
    ("organization", lambda s: s.organization_name or s.organization_id),
    ("read-only", lambda s: s.read_only),
)


TYPE_COLUMNS = (
    ("type", lambda t: t.type_id),
    ("name", lambda t: t.name),
    ("description", lambda t: t.description),
)




class Status(enum.StrEnum):
    valid = "valid"
    expired = "expired"
    future = "future"
    paid = "paid"
    unpaid = "unpaid"


class SortBy(enum.StrEnum):
    name = "name"
    userId = "userId"
    startDate = "startDate"
    endDate = "endDate"
    buyDate = "buyDate"
    typeId = "typeId"
    subscriptionId = "subscriptionId"



def resolve_subscription(client: "WasdiClient", id_or_name: str) -> tuple[str, "SubscriptionListViewModel | None"]:
    """The subscription ``id_or_name`` identifies or names among yours (an admin may give any id)."""
    return by_id_or_name(client.subscriptions.list(), id_or_name, id_of=lambda s: s.subscription_id,
                         name_of=lambda s: s.name, noun="subscription",
                         fetch=client.subscriptions.get, listing="subscriptions list")




@app.command("list")
def list_(
    valid: Annotated[bool, typer.Option("--valid", help="Only paid subscriptions valid now.")] = False,
    all_: Annotated[bool, typer.Option("--all", help="Every subscription of the server (admins).")] = False,
    user: Annotated[str | None, typer.Option("--user", help="With --all: owner contains this text.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="With --all: name contains this text.")] = None,
    status: Annotated[Status | None, typer.Option("--status", help="With --all: only these.")] = None,
    sort: Annotated[SortBy, typer.Option("--sort", help="With --all: sort field.")] = SortBy.name,
    desc: Annotated[bool, typer.Option("--desc", help="With --all: descending order.")] = False,
    offset: Annotated[int, typer.Option("--offset", min=0, help="With --all: skip this many.")] = 0,
    limit: Annotated[int, typer.Option("--limit", min=0, help="With --all: at most this many.")] = 10,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Subscriptions you own, have through an organization, or that are shared with you."""
    out = Output(json_output=json, quiet=quiet)
    if not all_ and (user or name or status or desc or offset or limit != 10 or sort is not SortBy.name):
        raise CliError("--user, --name, --status, --sort, --desc, --offset and --limit need --all", USAGE)
    with connection.client(profile, base_url) as client:
        if all_:
            found = client.subscriptions.list_all(userfilter=user, namefilter=name,
                                                  statusfilter=status.value if status else None, offset=offset,
                                                  limit=limit, sortby=sort.value, order="desc" if desc else "asc")
        else:
            found = client.subscriptions.list(valid=valid)
    out.items(found, LIST_COLUMNS, id_of=lambda s: s.subscription_id, empty="No subscriptions.")


@app.command()
def show(subscription: SubscriptionArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
         json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Details of one subscription."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        subscription_id, _ = resolve_subscription(client, subscription)
        details = client.subscriptions.get(subscription_id)
    out.item(details, SHOW_FIELDS, id_of=lambda s: s.subscription_id)


ACTIVE_FIELDS = (
    ("id", lambda s: s.subscription_id),
    ("name", lambda s: s.name),
    ("type", lambda s: s.type_name or s.type_id),
    ("owner", lambda s: s.owner_user_id),
    ("start", lambda s: when(s.start_date)),
    ("end", lambda s: when(s.end_date)),
    ("organization", lambda s: s.organization_name or s.organization_id),
    ("why", lambda s: s.reason),
    ("running time", lambda s: s.running_time),
)


@app.command()
def active(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
           quiet: QuietOpt = False) -> None:
    """The subscription your work is counted on now (your active one, else your best valid one)."""
    from wasdi_sdk import EmptyResultError, NotFoundError

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        try:
            current = client.subscriptions.get_active()
        except (NotFoundError, EmptyResultError) as e:
            raise CliError("you have no valid subscription (see 'wasdi subscriptions types' and "
                           "'wasdi subscriptions buy')") from e
    out.item(current, ACTIVE_FIELDS, id_of=lambda s: s.subscription_id)


@app.command()
def count(profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """How many subscriptions the server holds (admins)."""
    with connection.client(profile, base_url) as client:
        total = client.subscriptions.count()
    Output().value(str(total.int_value or 0))


@app.command()
def types(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """The subscription types on sale."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.subscriptions.list_types()
    out.items(found, TYPE_COLUMNS, id_of=lambda t: t.type_id, empty="No subscription types.")


@app.command()
def create(
    type_id: Annotated[str, typer.Argument(metavar="TYPE", help="Subscription type, e.g. OneMonthStandard "
                                                               "(see 'wasdi subscriptions types').")],
    name: NameOpt = None,
    description: DescriptionOpt = None,
    start: StartOpt = None,
    end: EndOpt = None,
    days: DaysOpt = None,
    org: OrgOpt = None,
    user: Annotated[str | None, typer.Option("--user", help="Owner (admins; default: you).")] = None,
    paid: Annotated[bool, typer.Option("--paid", help="Create it paid (admins).")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create a subscription (unpaid; see 'buy') and its default project; prints its id on stdout."""
    if not type_id.strip():
        raise CliError("TYPE must not be empty", USAGE)
    with connection.client(profile, base_url) as client:
        created = client.subscriptions.create(type_id=type_id, name=name, description=description, start_date=start,
                                              end_date=end, duration_days=days,
                                              organization_id=_org_id(client, org) or None,
                                              user_id=user, buy_success=True if paid else None)
    if not created.message:
        raise CliError("the server did not return the id of the new subscription")
    Output().value(created.message)
    message(f"Created subscription {created.message} ({type_id})")


@app.command()
def update(
    subscription: SubscriptionArg,
    name: NameOpt = None,
    description: DescriptionOpt = None,
    type_id: Annotated[str | None, typer.Option("--type", help="Type (unpaid subscriptions, or admins).")] = None,
    start: StartOpt = None,
    end: EndOpt = None,
    days: DaysOpt = None,
    org: OrgOpt = None,
    paid: Annotated[bool | None, typer.Option("--paid/--unpaid", help="Mark paid or not (admins).")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change a subscription (options not given keep their value)."""
    if all(v is None for v in (name, description, type_id, start, end, days, org, paid)):
        raise CliError("nothing to change: give at least one option", USAGE)
    with connection.client(profile, base_url) as client:
        subscription_id, entry = resolve_subscription(client, subscription)
        client.subscriptions.update(subscription_id=subscription_id, name=name, description=description,
                                    type_id=type_id, start_date=start, end_date=end, duration_days=days,
                                    organization_id=_org_id(client, org), buy_success=paid)
    message(f"Updated subscription {named(subscription_id, entry)}")


@app.command()
def delete(subscription: SubscriptionArg, yes: YesOpt = False, profile: ProfileOpt = None,
           base_url: BaseUrlOpt = None) -> None:
    """Delete a subscription you own with its projects (or drop your sharing of one)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        subscription_id, entry = resolve_subscription(client, subscription)
        label = named(subscription_id, entry)
        if not yes and not typer.confirm(f"Delete subscription {label} and its projects?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
        result = client.subscriptions.delete(subscription_id)
    if result.message == "Sharing removed":
        message(f"Left subscription {label} (your sharing was removed)")
    else:
        message(f"Deleted subscription {label}")


@app.command()
def buy(
    subscription: SubscriptionArg,
    provider: Annotated[str, typer.Option("--provider", help="Payment provider: local (a self-hosted server's "
                                                            "simulated checkout) or stripe.")] = "local",
    workspace: Annotated[str | None, typer.Option("--workspace", "--ws", metavar="ID_OR_NAME",
                                                  help="Workspace (id or name) to notify when paid.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Print the checkout URL to pay for a subscription (open it in a browser)."""
    with connection.client(profile, base_url) as client:
        subscription_id, entry = resolve_subscription(client, subscription)
        if workspace:
            from .workspaces import resolve_workspace

            workspace = resolve_workspace(client, workspace)[0]
        url = client.subscriptions.payment_url(subscription_id, payprov=provider, workspace=workspace).message
    if not url:
        raise CliError("the server returned no checkout URL")
    Output().value(url)
    message(f"Open the URL above to pay for subscription {named(subscription_id, entry)}; it becomes valid "
            "once the payment is confirmed.")


@app.command()
def confirm(
    checkout_session: Annotated[str, typer.Argument(metavar="CHECKOUT_SESSION", help="The checkout session id "
                                                                                     "(cs_...) of the payment.")],
    provider: Annotated[str, typer.Option("--provider", help="Payment provider: local or stripe.")] = "local",
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Have the server check a paid checkout with its provider and mark the subscription paid (when the
    browser did not come back from the checkout page); no login needed."""
    target = connection.resolve(profile, base_url)
    with connection.connect(target, require_session=False) as client:
        client.subscriptions.confirm_payment(checkout_session, payprov=provider)
    message(f"Checkout {checkout_session} confirmed: the subscription is paid")


add_share_commands(app, noun="subscription", group="subscriptions", id_param="subscription",
                   resource_arg=SubscriptionArg, resolve=resolve_subscription, label=named)
