"""``wasdi search --platform S2 --from ... --to ... --bbox N,W,S,E``: find products (``client.search``).

The query is built exactly as the official library's ``searchEOImages`` builds it
(``wasdi_sdk.search_query.build_query``).  Without ``--limit`` every result is fetched
(``/search/querylist``); with it, one page of that size (``/search/query``).
"""

from datetime import date
from typing import Annotated

import typer

from .. import connection
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message, when

app = typer.Typer()

RESULT_COLUMNS = (
    ("title", lambda r: r.title),
    ("date", lambda r: when(_prop(r, "date"))),
    ("platform", lambda r: r.platform or _prop(r, "platformname")),
    ("type", lambda r: _prop(r, "producttype")),
    ("cloud %", lambda r: _prop(r, "cloudcoverpercentage")),
    ("orbit", lambda r: _prop(r, "relativeorbitnumber")),
    ("size", lambda r: _prop(r, "size")),
    ("provider", lambda r: r.provider),
)


def _prop(result: object, key: str) -> str:
    properties = getattr(result, "properties", None) or {}
    return str(properties.get(key) or "")


def parse_bbox(text: str) -> tuple[float, float, float, float]:
    """``N,W,S,E`` as four floats, north above south and each within range; usage error otherwise."""
    parts = [p.strip() for p in text.split(",")]
    try:
        north, west, south, east = (float(p) for p in parts)
    except ValueError as e:
        raise CliError(f"--bbox must be N,W,S,E (four numbers), not {text!r}", USAGE) from e
    if not (-90 <= south <= north <= 90 and -180 <= west <= 180 and -180 <= east <= 180):
        raise CliError(f"--bbox {text!r} is not N,W,S,E in degrees (north >= south)", USAGE)
    return north, west, south, east


def parse_cloud(text: str) -> tuple[float, float]:
    """``LO,HI`` percentages; usage error otherwise."""
    parts = [p.strip() for p in text.split(",")]
    try:
        low, high = (float(p) for p in parts)
    except ValueError as e:
        raise CliError(f"--cloud must be LO,HI (two percentages), not {text!r}", USAGE) from e
    if not 0 <= low <= high <= 100:
        raise CliError(f"--cloud {text!r} must be LO,HI with 0 <= LO <= HI <= 100", USAGE)
    return low, high


def parse_params(values: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise CliError(f"--param must be KEY=VALUE, not {item!r}", USAGE)
        out[key.strip()] = value.strip()
    return out


def _number(value: float) -> str:
    return f"{value:g}"


@app.command("search")
def search(
    platform: Annotated[str, typer.Option("--platform", help="Mission: S1, S2, S3, S5P, VIIRS, L8, ENVI, ERA5 or a "
                                                            "platform name such as Sentinel-2.")],
    date_from: Annotated[str | None, typer.Option("--from", metavar="YYYY-MM-DD",
                                                  help="First day (default 1957-10-04).")] = None,
    date_to: Annotated[str | None, typer.Option("--to", metavar="YYYY-MM-DD", help="Last day (default today).")]
    = None,
    bbox: Annotated[str | None, typer.Option("--bbox", metavar="N,W,S,E", help="Area: north, west, south, east in "
                                                                              "degrees.")] = None,
    product_type: Annotated[str | None, typer.Option("--type", help="Product type, e.g. GRD or S2MSI2A; several, "
                                                                   "comma separated, are searched together.")]
    = None,
    cloud: Annotated[str | None, typer.Option("--cloud", metavar="LO,HI",
                                              help="Cloud cover range in percent (Sentinel-2 only).")] = None,
    orbit: Annotated[int | None, typer.Option("--orbit", min=0, help="Relative orbit number.")] = None,
    mode: Annotated[str | None, typer.Option("--mode", help="Sensor mode, e.g. IW (Sentinel-1 only).")] = None,
    name: Annotated[str | None, typer.Option("--name", help="Product name prefix, e.g. S1A_.")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", metavar="KEY=VALUE",
                                                    help="Extra filter (repeatable), e.g. timeliness=NTC.")] = None,
    provider: Annotated[str, typer.Option("--provider", help="Data provider code(s), comma separated; AUTO lets the "
                                                            "server choose.")] = "AUTO",
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="Fetch one page of this many results "
                                                                     "(default: every result).")] = None,
    count: Annotated[bool, typer.Option("--count", help="Print only how many products match.")] = False,
    show_query: Annotated[bool, typer.Option("--show-query", help="Print the query string on stderr.")] = False,
    links: Annotated[bool, typer.Option("--links", help="Print only each result's link (what 'wasdi import' "
                                                        "takes).")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Search a mission's products by area, dates, type, cloud cover and orbit."""
    from wasdi_sdk import EmptyResultError
    from wasdi_sdk.search_query import FIRST_DATE, build_query, day

    out = Output(json_output=json, quiet=quiet)
    box = parse_bbox(bbox) if bbox else None
    cloud_range = parse_cloud(cloud) if cloud else None
    types = [t.strip() for t in product_type.split(",") if t.strip()] if product_type else [None]
    if limit is not None and len(types) > 1:
        raise CliError("--limit takes one --type: a page is one query", USAGE)
    days = {}
    for option, text, default in (("--from", date_from, FIRST_DATE), ("--to", date_to, date.today().isoformat())):
        try:
            days[option] = day(text, default)
        except ValueError as e:
            raise CliError(f"{option}: {e}", USAGE) from e
    first, last = days["--from"], days["--to"]
    if first > last:
        raise CliError(f"--from {first} is after --to {last}: swap them", USAGE)
    try:
        queries = [build_query(platform, date_from, date_to, bbox=box, product_type=kind, orbit=orbit,
                               sensor_mode=mode, params=parse_params(param), file_name=name,
                               cloud_coverage=f"[{_number(cloud_range[0])} TO {_number(cloud_range[1])}]"
                               if cloud_range else None)
                   for kind in types]
    except ValueError as e:
        raise CliError(str(e), USAGE) from e
    query = queries[0]
    if show_query:
        for text in queries:
            message(text)
    with connection.connect(connection.resolve(profile, base_url)) as client:
        try:
            if count:
                found = (client.search.count(query, providers=provider) if len(queries) == 1
                         else client.search.count_list(queries, providers=provider))
                Output().value(str(found))
                return
            if limit is not None:
                results = client.search.query(query, providers=provider, offset=0, limit=limit)
            else:
                results = client.search.query_list(queries, providers=provider)
        except EmptyResultError as e:
            raise CliError(f"the search failed: the server refused the query (no access to the mission "
                           f"'{platform}', or an unknown provider '{provider}': 'wasdi search providers' lists "
                           "them) or every data provider failed") from e
    if links:
        if not results:
            message("No products found.")
        for result in results:
            Output().value(result.link or "")
        return
    out.items(results, RESULT_COLUMNS, id_of=lambda r: r.title, empty="No products found.")


PROVIDER_COLUMNS = (
    ("code", lambda p: p.code),
    ("description", lambda p: p.description),
    ("link", lambda p: p.link),
)


@app.command("providers")
def providers(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
              quiet: QuietOpt = False) -> None:
    """The data providers the server searches (their codes are what 'wasdi search --provider' takes)."""
    out = Output(json_output=json, quiet=quiet)
    with connection.connect(connection.resolve(profile, base_url)) as client:
        found = client.search.list_providers()
    out.items(found, PROVIDER_COLUMNS, id_of=lambda p: p.code, empty="No data providers.")
