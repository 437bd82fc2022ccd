"""``wasdi credits ...``: credit packages and their purchase (``client.credits``)."""

from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message, when

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient

app = typer.Typer(name="credits", help="Credit packages: list, total, types on sale, buy, confirm a payment.",
                  no_args_is_help=True)

LIST_COLUMNS = (
    ("id", lambda p: p.credit_package_id),
    ("name", lambda p: p.name),
    ("type", lambda p: p.type),
    ("credits", lambda p: p.credits_remaining),
    ("paid", lambda p: p.buy_success),
    ("bought", lambda p: when(p.buy_date) if p.buy_date else ""),
)

TYPE_COLUMNS = (
    ("type", lambda t: t.type_id),
    ("name", lambda t: t.name),
    ("description", lambda t: t.description),
)


def _client(profile: str | None, base_url: str | None, *, require_session: bool = True) -> "WasdiClient":
    return connection.connect(connection.resolve(profile, base_url), require_session=require_session)


@app.command("list")
def list_(
    ascending: Annotated[bool, typer.Option("--ascending", help="Oldest first (default: newest first).")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Your credit packages, paid or not."""
    out = Output(json_output=json, quiet=quiet)
    with _client(profile, base_url) as client:
        packages = client.credits.list(ascending_order=ascending)
    out.items(packages, LIST_COLUMNS, id_of=lambda p: p.credit_package_id, empty="No credit packages.")


@app.command()
def total(profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Credits remaining in your paid packages (a number on stdout)."""
    with _client(profile, base_url) as client:
        amount = client.credits.total()
    Output().value(f"{amount:g}")


@app.command()
def types(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """The credit package types on sale (no login needed)."""
    out = Output(json_output=json, quiet=quiet)
    with _client(profile, base_url, require_session=False) as client:
        package_types = client.credits.list_types()
    out.items(package_types, TYPE_COLUMNS, id_of=lambda t: t.type_id, empty="No credit package types.")


@app.command()
def buy(
    package_type: Annotated[str, typer.Argument(metavar="TYPE", help="Package type, e.g. Fifty or OneHundred "
                                                                    "(see 'wasdi credits types').")],
    name: Annotated[str | None, typer.Option("--name", help="Name of the package (default: the type's name).")]
    = None,
    provider: Annotated[str, typer.Option("--provider", help="Payment provider: local (a self-hosted server's "
                                                            "simulated checkout) or stripe.")] = "local",
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create a credit package and print the checkout URL to pay for it (open it in a browser)."""
    from wasdi_sdk import BadRequestError

    if not package_type.strip():
        raise CliError("TYPE must not be empty", USAGE)
    with _client(profile, base_url) as client:
        try:
            created = client.credits.create(type=package_type, name=name)
        except BadRequestError as e:
            raise CliError(f"cannot create a '{package_type}' credit package: {e} "
                           "(see 'wasdi credits types')") from e
        package_id = created.message
        if not package_id:
            raise CliError("the server did not return the id of the new credit package")
        try:
            url = client.credits.payment_url(package_id, payprov=provider).message
        except BadRequestError as e:
            raise CliError(f"created credit package {package_id}, but provider '{provider}' refused the "
                           f"checkout: {e}") from e
    if not url:
        raise CliError(f"created credit package {package_id}, but the server returned no checkout URL")
    Output().value(url)
    message(f"Created credit package {package_id} ({package_type}); open the URL above to pay. "
            "It counts in 'wasdi credits total' once the payment is confirmed.")


@app.command()
def confirm(
    checkout_session: Annotated[str, typer.Argument(metavar="CHECKOUT_SESSION", help="The checkout session id "
                                                                                     "(cs_...) of the payment.")],
    provider: Annotated[str, typer.Option("--provider", help="Payment provider: local or stripe.")] = "local",
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Have the server check a paid checkout with its provider and count the credit package (when the
    browser did not come back from the checkout page); no login needed."""
    with _client(profile, base_url, require_session=False) as client:
        client.credits.confirm_payment(checkout_session, payprov=provider)
    message(f"Checkout {checkout_session} confirmed: the credit package counts in 'wasdi credits total'")
