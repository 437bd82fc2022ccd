"""``wasdi market ...``: the app store (``client.processors`` market methods, ``client.processor_media``)."""

from typing import Annotated

import typer

from .. import connection
from ..apps_lookup import AppArg, require_app
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, epoch_ms

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
    ("in the store", lambda d: d.show_in_store),
    ("link", lambda d: d.link),
    ("e-mail", lambda d: d.email),
    ("published", lambda d: epoch_ms(d.publish_date)),
    ("updated", lambda d: epoch_ms(d.update_date)),
    ("images", lambda d: len(d.images or [])),
    ("long description", lambda d: d.long_description),
)


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
        apps = client.processors.market_list(categories=category, publishers=publisher, name=name, score=min_score,
                                             min_price=min_price, max_price=max_price, order_by=sort,
                                             order_direction=-1 if desc else 1, page=page, items_per_page=per_page)
    out.items(apps, LIST_COLUMNS, id_of=lambda a: a.processor_name, empty="No apps match.")


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
