"""``wasdi market ...``: the app store (``client.processors`` market methods, ``client.processor_media``)."""

import json as jsonlib
from typing import Annotated, Any

import typer

from .. import connection
from ..apps_lookup import AppArg, require_app
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message, when

app = typer.Typer(name="market", help="The app store: list and show apps, their categories and publishers.",
                  no_args_is_help=True)

ORDERS = ("name", "friendlyName", "score", "votes", "price", "date")

LIST_COLUMNS = (
    ("name", lambda a: a.processor_name),
    ("title", lambda a: a.friendly_name),
    ("publisher", lambda a: a.publisher_nick_name),
    ("score", lambda a: "-" if a.score is None or a.score < 0 else f"{a.score:.1f}"),
    ("votes", lambda a: a.votes),
    ("price", lambda a: a.price),
    ("price/km²", lambda a: a.square_kilometer_price),
    ("mine", lambda a: a.is_mine),
)

SHOW_FIELDS = (
    ("name", lambda d: d.processor_name),
    ("id", lambda d: d.processor_id),
    ("title", lambda d: d.friendly_name),
    ("description", lambda d: d.processor_description),
    ("publisher", lambda d: d.publisher_nick_name),
    ("score", lambda d: "no votes" if d.score is None or d.score < 0 else f"{d.score:.2f}"),
    ("reviews", lambda d: d.reviews_count),
    ("runs here", lambda d: d.purchased),
    ("price per run", lambda d: d.ondemand_price),
    ("price per km²", lambda d: d.square_kilometer_price),
    ("area parameter", lambda d: d.area_parameter_name),
    ("categories", lambda d: ", ".join(d.category_names or [])),
    ("a run reaches", lambda d: {"workspace": "its own workspace", "account": "its caller's whole account"}
     .get(d.run_scope or "", d.run_scope)),
    ("in the store", lambda d: d.show_in_store),
    ("link", lambda d: d.link),
    ("e-mail", lambda d: d.email),
    ("published", lambda d: when(d.publish_date)),
    ("updated", lambda d: when(d.update_date)),
    ("images", lambda d: len(d.images or [])),
    ("long description", lambda d: d.long_description),
)


def category_ids(client: Any, given: list[str] | None) -> list[str] | None:
    """The category ids ``given`` names (an id or a category's name, any case); an unknown one is an error that
    names the valid ones."""
    if not given:
        return given
    known = client.processor_media.list_categories()
    by_key = {str(key).casefold(): str(c.id) for c in known for key in (c.id, c.category) if key}
    unknown = [g for g in given if g.casefold() not in by_key]
    if unknown:
        valid = ", ".join(f"{c.id} ({c.category})" if c.category and c.category != c.id else str(c.id)
                          for c in known)
        raise CliError(f"no category {', '.join(repr(u) for u in unknown)}; the categories are: {valid}", USAGE)
    return [by_key[g.casefold()] for g in given]


@app.command("list")
def list_(
    category: Annotated[list[str] | None, typer.Option("--category", help="Category id (repeatable: any).")] = None,
    publisher: Annotated[list[str] | None, typer.Option("--publisher", help="Publisher user id (repeatable).")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Part of the app's name or title.")] = None,
    min_score: Annotated[int | None, typer.Option("--min-score", min=0, max=5, help="Lowest average vote.")] = None,
    min_price: Annotated[int | None, typer.Option("--min-price", min=0, help="Lowest price per run.")] = None,
    max_price: Annotated[int | None, typer.Option("--max-price", min=0, help="Highest price per run.")] = None,
    sort: Annotated[str, typer.Option("--sort", help=f"One of: {', '.join(ORDERS)}.")] = "name",
    desc: Annotated[bool, typer.Option("--desc", help="Sort descending.")] = False,
    page: Annotated[int, typer.Option("--page", min=0, help="Page, from 0.")] = 0,
    per_page: Annotated[int, typer.Option("--per-page", min=1, max=1000, help="Apps per page.")] = 50,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Apps in the store that you can see, filtered and sorted."""
    if sort not in ORDERS:
        raise CliError(f"--sort must be one of: {', '.join(ORDERS)}", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        categories = category_ids(client, category)
        apps = client.processors.market_list(categories=categories, publishers=publisher, name=name, score=min_score,
                                             min_price=min_price, max_price=max_price, order_by=sort,
                                             order_direction=-1 if desc else 1, page=page, items_per_page=per_page)
    filtered = any(value not in (None, []) for value in (category, publisher, name, min_score, min_price, max_price))
    empty = "No apps match." if filtered or page else EMPTY_STORE
    out.items(apps, LIST_COLUMNS, id_of=lambda a: a.processor_name, empty=empty)


EMPTY_STORE = ("The store has no apps you can see yet. To publish one of yours: 'wasdi apps deploy DIR', then "
               "'wasdi market publish APP --show' (and 'wasdi apps update APP --public' for every user to see it).")


@app.command()
def show(app_ref: AppArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """The store page of an app: pricing, categories, score."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        detail = client.processors.market_detail(str(entry.processor_name))
    out.item(detail, SHOW_FIELDS, id_of=lambda d: d.processor_id)


@app.command()
def categories(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
               quiet: QuietOpt = False) -> None:
    """The store categories and how many apps you can see in each."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.processor_media.list_categories()
    out.items(found, (("id", lambda c: c.id), ("category", lambda c: c.category), ("apps", lambda c: c.count)),
              id_of=lambda c: c.id, empty="No categories.")


@app.command()
def publishers(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
               quiet: QuietOpt = False) -> None:
    """Publishers of the store apps you can see."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.processor_media.list_publishers()
    out.items(found, (("publisher", lambda p: p.publisher), ("nickname", lambda p: p.nick_name),
                      ("apps", lambda p: p.app_count)), id_of=lambda p: p.publisher, empty="No publishers.")


PAYMENT_FIELDS = (
    ("id", lambda p: p.app_payment_id),
    ("name", lambda p: p.payment_name),
    ("app", lambda p: p.processor_id),
    ("buyer", lambda p: p.user_id),
    ("paid", lambda p: p.buy_success),
    ("bought", lambda p: when(p.buy_date)),
    ("used by a run", lambda p: when(p.run_date)),
)
ProviderOpt = Annotated[str, typer.Option("--provider", help="Payment provider (stripe on the WASDI cloud, local "
                                                             "on a self-hosted server).")]


@app.command()
def buy(app_ref: AppArg, provider: ProviderOpt = "stripe",
        name: Annotated[str | None, typer.Option("--name", help="A name for this purchase.")] = None,
        profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Buy one run of an on-demand priced app: prints the checkout URL to open in a browser."""
    from datetime import UTC, datetime

    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        payment = client.processors.add_app_payment(processor_id=entry.processor_id, buy_date=stamp,
                                                    payment_name=name or f"{entry.processor_name} run")
        url = client.processors.payment_url(processor=str(entry.processor_id), app_payment=str(payment.message),
                                            payprov=provider)
    Output().value(str(url.message))
    message(f"Open the URL above to pay for a run of {entry.processor_name} (purchase {payment.message}); "
            f"then 'wasdi market purchased {entry.processor_name}' says true")


@app.command()
def purchased(app_ref: AppArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Whether you can run an app now (free, yours, shared with you, or a paid run not used yet)."""
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        answer = client.processors.is_app_purchased(str(entry.processor_id))
    Output().value("true" if answer else "false")


@app.command()
def payment(payment_id: Annotated[str, typer.Argument(metavar="PAYMENT", help="App payment id.")],
            profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
            quiet: QuietOpt = False) -> None:
    """One of your app purchases."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.processors.get_app_payment(payment_id)
    out.item(found, PAYMENT_FIELDS, id_of=lambda p: p.app_payment_id)


@app.command()
def confirm(checkout: Annotated[str, typer.Argument(metavar="CHECKOUT", help="Checkout session id.")],
            provider: ProviderOpt = "stripe", profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Check a checkout with its provider again and record the payment (the provider normally does it)."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        try:
            client.processors.confirm_payment(checkout, payprov=provider)
        except EmptyResultError as e:
            raise CliError(f"checkout {checkout} proves no payment with {provider}: pay first, or check the id") from e
    message(f"Checkout {checkout} is paid")


@app.command()
def credits(app_ref: AppArg,
            params: Annotated[str, typer.Option("--params", metavar="FILE|JSON", help="The run's parameters.")],
            profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Credits a run of an area-priced app with these parameters would cost you."""
    from pathlib import Path

    path = Path(params)
    text = path.read_text(encoding="utf-8") if path.is_file() else params
    try:
        decoded = jsonlib.loads(text)
    except ValueError as e:
        raise CliError(f"--params is neither a JSON file nor JSON text: {e}", USAGE) from e
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        cost = client.processors.credits_for_run(decoded, processor_id=str(entry.processor_id))
    Output().value(f"{cost:.2f}")


@app.command()
def publish(
    app_ref: AppArg,
    title: Annotated[str | None, typer.Option("--title", help="The name shown in the store.")] = None,
    price: Annotated[float | None, typer.Option("--price", min=0, help="Price of one run (0: free).")] = None,
    km_price: Annotated[float | None, typer.Option("--km-price", min=0, help="Credits per km² of the area of "
                                                                             "interest (0: none).")] = None,
    area_param: Annotated[str | None, typer.Option("--area-param", help="The parameter holding the area.")] = None,
    category: Annotated[list[str] | None, typer.Option("--category", help="Category id (repeatable; replaces "
                                                                          "the app's categories).")] = None,
    show: Annotated[bool | None, typer.Option("--show/--hide", help="Show the app in the store, or not.")] = None,
    link: Annotated[str | None, typer.Option("--link", help="A web page about the app.")] = None,
    email: Annotated[str | None, typer.Option("--email", help="Contact e-mail.")] = None,
    long_description: Annotated[str | None, typer.Option("--long-description", help="The store text.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change an app's store page: title, prices, categories, visibility in the store."""
    from wasdi_sdk.models import AppDetailViewModel

    details = AppDetailViewModel(friendly_name=title, ondemand_price=price, square_kilometer_price=km_price,
                                 area_parameter_name=area_param, categories=category, show_in_store=show, link=link,
                                 email=email, long_description=long_description)
    if not details.to_wire():
        raise CliError("nothing to change: give --title, --price, --km-price, --area-param, --category, "
                       "--show/--hide, --link, --email or --long-description", USAGE)
    with connection.client(profile, base_url) as client:
        entry = require_app(client, app_ref)
        if category:
            details.categories = category_ids(client, category)
        client.processors.update_details(details, processor_id=str(entry.processor_id))
    message(f"Updated the store page of {entry.processor_name}")
