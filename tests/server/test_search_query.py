"""The /search query parser: the official library's and the web client's literal forms, and fuzzing."""

from __future__ import annotations

import random
import string
from datetime import UTC, datetime

import pytest

from wasdi_server.errors import BadRequest
from wasdi_server.search_grammar import (
    PLATFORMS,
    SearchQuery,
    canonical_platform,
    parse_instant,
    parse_query,
    platform_from_name,
)

DATES_JAN = ("( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]"
             "AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]) ")
DATES_10 = ("( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]"
            "AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]) ")
FOOTPRINT = '( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '

# -- the literal examples of clients.md ("search query grammar"), byte for byte --------------------
S2_BODY = (b'["( footprint:\\"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))\\") AND '
           b'( platformname:Sentinel-2  AND producttype:S2MSI1C AND cloudcoverpercentage:[0 TO 30] AND '
           b'relativeorbitnumber:22) AND ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]'
           b'AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]) "]')
S2_QUERY = ('( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '
            "( platformname:Sentinel-2  AND producttype:S2MSI1C AND cloudcoverpercentage:[0 TO 30] AND "
            "relativeorbitnumber:22) AND ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]"
            "AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]) ")
S1_QUERY = ('( footprint:"intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))") AND '
            "( platformname:Sentinel-1 AND producttype:GRD AND sensoroperationalmode:IW AND relativeorbitnumber:117)"
            " AND ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]AND endPosition:"
            "[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]) ")
S2_NO_BBOX = ("( platformname:Sentinel-2 ) AND ( beginPosition:[2023-01-01T00:00:00.000Z TO "
              "2023-01-10T23:59:59.999Z]AND endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-10T23:59:59.999Z]) ")
# clients.md abbreviates the date block of these three as "[...]" / "..."; expanded here as the library sends it.
S3_QUERY = "S3A_SL_2_LST( platformname:Sentinel-3 AND timeliness:NTC AND producttype:SL_2_LST___) AND " + DATES_10
VIIRS_QUERY = "( platformname:VIIRS AND producttype:VIIRS_1d_composite) AND " + DATES_10
L8_QUERY = "( platformname:Landsat-* AND producttype:L1TP) AND " + DATES_10


def test_the_s2_body_decodes_to_the_query() -> None:
    import json

    assert json.loads(S2_BODY) == [S2_QUERY]


def test_s2_literal_example() -> None:
    q = parse_query(S2_QUERY)
    assert q.platform_name == "Sentinel-2"  # "Sentinel-2 " with its trailing space and the double space
    assert (q.north, q.south, q.east, q.west) == (46.0, 45.0, 8.0, 7.0)
    assert q.bbox == (7.0, 45.0, 8.0, 46.0)
    assert q.product_type == "S2MSI1C"
    assert (q.cloud_coverage_from, q.cloud_coverage_to) == (0.0, 30.0)
    assert q.relative_orbit == 22
    assert (q.start_from_date, q.start_to_date) == ("2023-01-01T00:00:00.000Z", "2023-01-31T23:59:59.999Z")
    assert (q.end_from_date, q.end_to_date) == ("2023-01-01T00:00:00.000Z", "2023-01-31T23:59:59.999Z")
    assert q.product_name is None and q.sensor_mode is None
    assert (q.offset, q.limit) == (-1, 10)  # the legacy defaults
    assert q.filters == {
        "footprint": "intersects(POLYGON(( 7.0 45.0,7.0 46.0,8.0 46.0,8.0 45.0,7.0 45.0)))",
        "platformname": "Sentinel-2", "producttype": "S2MSI1C", "cloudcoverpercentage": "[0 TO 30]",
        "relativeorbitnumber": "22",
        "beginPosition": "[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]",
        "endPosition": "[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]",
    }


def test_s1_literal_example() -> None:
    q = parse_query(S1_QUERY)
    assert (q.platform_name, q.product_type, q.sensor_mode, q.relative_orbit) == ("Sentinel-1", "GRD", "IW", 117)
    assert q.bbox == (7.0, 45.0, 8.0, 46.0)
    assert q.start_to_date == "2023-01-10T23:59:59.999Z" and q.end_from_date == "2023-01-01T00:00:00.000Z"
    assert q.cloud_coverage_from is None


def test_s2_without_bbox_or_type() -> None:
    q = parse_query(S2_NO_BBOX)
    assert q.platform_name == "Sentinel-2" and q.bbox is None and q.product_type is None
    assert q.filters["platformname"] == "Sentinel-2"


def test_s3_with_file_name_and_extra_params() -> None:
    q = parse_query(S3_QUERY)
    assert q.product_name == "S3A_SL_2_LST"  # glued in front of "( platformname:"
    assert (q.platform_name, q.timeliness, q.product_type) == ("Sentinel-3", "NTC", "SL_2_LST___")
    assert q.filters["timeliness"] == "NTC"


def test_viirs_and_landsat_defaults() -> None:
    viirs = parse_query(VIIRS_QUERY)
    assert (viirs.platform_name, viirs.product_type) == ("VIIRS", "VIIRS_1d_composite")
    landsat = parse_query(L8_QUERY)
    assert (landsat.platform_name, landsat.product_type) == ("Landsat-*", "L1TP")


def test_the_abbreviated_forms_of_clients_md() -> None:
    # "AND ..." parses (a bare word is free text); "[...]" is not a date range: malformed.
    assert parse_query("( platformname:VIIRS AND producttype:VIIRS_1d_composite) AND ...").platform_name == "VIIRS"
    assert parse_query("( platformname:Landsat-* AND producttype:L1TP) AND ...").product_type == "L1TP"
    with pytest.raises(BadRequest):
        parse_query("S3A_SL_2_LST( platformname:Sentinel-3 AND timeliness:NTC AND producttype:SL_2_LST___) AND "
                    "( beginPosition:[...]AND endPosition:[...]) ")


def test_dropped_keys_are_not_required() -> None:
    # The library drops cloud cover for S1 and sensor mode for S2; a query carrying them still parses.
    q = parse_query("( platformname:Sentinel-1 AND cloudcoverpercentage:[0 TO 10]) AND " + DATES_10)
    assert q.platform_name == "Sentinel-1" and q.cloud_coverage_to == 10.0


# -- the web client's forms --------------------------------------------------------------------
def web_geoselection(north: float, west: float, south: float, east: float) -> str:
    # light-search.service.ts getOpenSearchGeoselection: NE, NW, SW, SE, NE; ')))" )'
    return (f'( footprint:"intersects(POLYGON(({east} {north},{west} {north},{west} {south},{east} {south},'
            f'{east} {north})))" )')


def web_mission(mission: str, *filters: str) -> str:
    # mission-filters.service.ts: ' OR (' + name:value + ' AND k:v'... + ')', then the first 'OR' removed
    text = " OR (platformname:" + mission + "".join(" AND " + f for f in filters) + ")"
    return text.replace("OR", "", 1)


def web_filter(*parts: str) -> str:
    return " AND ".join(p for p in parts if p)


def test_web_client_full_search() -> None:
    dates = ("( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z] AND "
             "endPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z] )")
    mission = web_mission("Sentinel-1", "filename:S1A_*", "producttype:GRD", "polarisationmode:VV+VH",
                          "sensoroperationalmode:IW", "relativeorbitnumber:117")
    q = parse_query(web_filter("", web_geoselection(46, 7, 45, 8), dates, mission))
    assert q.bbox == (7.0, 45.0, 8.0, 46.0)
    assert (q.platform_name, q.product_type, q.sensor_mode, q.relative_orbit) == ("Sentinel-1", "GRD", "IW", 117)
    assert q.polarisation == "VV+VH" and q.platform_serial_identifier == "A"
    assert q.start_from_date == "2023-01-01T00:00:00.000Z" and q.end_to_date == "2023-01-31T23:59:59.999Z"
    assert q.filters["filename"] == "S1A_*"


def test_web_client_open_ended_dates_and_ingestion() -> None:
    from_only = "( beginPosition:[2023-01-01T00:00:00.000Z TO NOW] AND endPosition:[2023-01-01T00:00:00.000Z TO NOW] )"
    q = parse_query(web_filter(from_only + " AND( ingestionDate:[2023-01-01T00:00:00.000Z TO NOW] )",
                               web_mission("Sentinel-2", "cloudcoverpercentage:[0 TO 20]")))
    assert (q.start_from_date, q.start_to_date) == ("2023-01-01T00:00:00.000Z", "NOW")
    assert q.filters["ingestionDate"] == "[2023-01-01T00:00:00.000Z TO NOW]"
    assert q.cloud_coverage_to == 20.0 and q.platform_name == "Sentinel-2"
    to_only = ("( beginPosition:[ * TO 2023-02-01T23:59:59.999Z] AND endPosition:[* TO 2023-02-01T23:59:59.999Z ] )"
               " AND( ingestionDate:[ * TO 2023-02-01T23:59:59.999Z ] )")
    q = parse_query(web_filter(to_only, web_mission("Sentinel-2")))
    assert (q.start_from_date, q.start_to_date) == (None, "2023-02-01T23:59:59.999Z")
    assert (q.end_from_date, q.end_to_date) == (None, "2023-02-01T23:59:59.999Z")
    start, end = q.interval()
    assert start is None and end == datetime(2023, 2, 1, 23, 59, 59, 999000, tzinfo=UTC)


def test_web_client_multi_mission_reads_the_first() -> None:
    missions = (" (platformname:Sentinel-1 AND producttype:GRD) OR (platformname:Sentinel-2 AND "
                "cloudcoverpercentage:[0 TO 30]) OR (platformname:Sentinel-3)")
    q = parse_query(web_filter(web_geoselection(46, 7, 45, 8), missions))
    assert (q.platform_name, q.product_type) == ("Sentinel-1", "GRD")
    assert q.cloud_coverage_from is None and "cloudcoverpercentage" not in q.filters


def test_web_client_text_query_and_the_empty_filter() -> None:
    q = parse_query("S2A_MSIL1C* AND " + web_geoselection(46, 7, 45, 8))
    assert q.product_name == "S2A_MSIL1C*"
    assert q.platform_name == "Sentinel-2"  # inferred from the name
    star = parse_query("*")
    assert star.product_name is None and star.platform_name is None


def test_web_client_old_geoselection_and_mission_without_index_name() -> None:
    old = '(footprint:"Intersects(POLYGON((7 45,7 46,8 46,8 45,7 45)))")'
    q = parse_query(old + " AND  (platformname:Sentinel-2 AND S2MSI2A)")
    assert q.bbox == (7.0, 45.0, 8.0, 46.0) and q.platform_name == "Sentinel-2"


# -- normalisation and keys --------------------------------------------------------------------
def test_spaces_around_colons_and_brackets_and_case() -> None:
    q = parse_query("(platformname : sentinel-1 AND producttype: SLC AND beginPosition : [ 2023-01-01 TO 2023-01-02 ])")
    assert (q.platform_name, q.product_type) == ("Sentinel-1", "SLC")
    assert (q.start_from_date, q.start_to_date) == ("2023-01-01", "2023-01-02")


@pytest.mark.parametrize(("raw", "canonical"), [
    ("Sentinel-2", "Sentinel-2"), ("SENTINEL-5P", "Sentinel-5P"), ("s1", "Sentinel-1"), ("L8", "Landsat-*"),
    ("worldcover", "WorldCover"), ("Some Mission", "Some Mission"), ("", None),
])
def test_platform_spelling(raw: str, canonical: str | None) -> None:
    assert canonical_platform(raw) == canonical


def test_generic_platform_up_to_and() -> None:
    q = parse_query("( platformname:My Own Mission AND producttype:X )")
    assert q.platform_name == "My Own Mission" and q.product_type == "X"


def test_every_recognised_platform_parses() -> None:
    for platform in PLATFORMS:
        assert parse_query(f"( platformname:{platform} )").platform_name == platform


@pytest.mark.parametrize(("name", "platform"), [
    ("S1B_IW_SLC__1SDV_x", "Sentinel-1"), ("S2C_MSIL2A_x", "Sentinel-2"), ("S3A_OL_1_EFR", "Sentinel-3"),
    ("S5P_OFFL_L2__NO2", "Sentinel-5P"), ("LC08_L1TP_x", "Landsat-*"), ("ASA_IMP_1P", "Envisat"),
    ("COPERNICUS_DSM_COG_10_N45", "DEM"), ("ESA_WorldCover_10m", "WorldCover"), ("meteocean_x.nc", "MeteOcean"),
    ("random.nc", "CM"), ("unknown_thing", None),
])
def test_platform_from_product_name(name: str, platform: str | None) -> None:
    assert platform_from_name(name) == platform


def test_filename_serial_and_swath_and_absolute_orbit() -> None:
    q = parse_query("( platformname:Sentinel-1 AND filename:S1B_* AND swathidentifier:IW1 AND absoluteorbit:4500 )")
    assert q.platform_serial_identifier == "B" and q.timeliness == "IW1" and q.absolute_orbit == 4500
    assert parse_query("( filename:S2A_* )").platform_name == "Sentinel-2"


def test_product_level_instrument_and_landsat_name() -> None:
    q = parse_query("( platformname:Sentinel-5P AND productlevel:L2 AND instrument:TROPOMI AND timeliness:NRTI )")
    assert (q.product_level, q.instrument, q.timeliness) == ("L2", "TROPOMI", "NRTI")
    assert parse_query("( platformname:Landsat-* AND name:L1TP )").product_type == "L1TP"


def test_copernicus_marine_main_class() -> None:
    assert parse_query("( productMainClass:Copernicus-marine AND dataset:x )").platform_name == "CM"


def test_legacy_offset_and_limit() -> None:
    q = parse_query("( platformname:Sentinel-2 ) offset=20 limit=50")
    assert (q.offset, q.limit) == (20, 50) and q.product_name is None


def test_point_and_unquoted_footprints() -> None:
    assert parse_query('footprint:"intersects(POINT(7.5 45.5))" AND platformname:S2').bbox == (7.5, 45.5, 7.5, 45.5)
    assert parse_query("footprint:intersects(POLYGON((7 45,8 46))) AND platformname:S2").bbox == (7, 45, 8, 46)


def test_out_of_range_footprint_is_dropped() -> None:
    q = parse_query('( footprint:"intersects(POLYGON(( 7 95,7 96,8 96,8 95,7 95)))") AND ( platformname:Sentinel-2 )')
    assert q.bbox is None and q.north is None and q.platform_name == "Sentinel-2"


def test_dates_with_and_without_millis_offsets_and_now() -> None:
    now = datetime(2024, 3, 1, 12, 0, tzinfo=UTC)
    assert parse_instant("2024-01-05T10:14:11Z") == datetime(2024, 1, 5, 10, 14, 11, tzinfo=UTC)
    assert parse_instant("2024-01-05T10:14:11.5+01:00") == datetime(2024, 1, 5, 9, 14, 11, 500000, tzinfo=UTC)
    assert parse_instant("2024-01-05") == datetime(2024, 1, 5, tzinfo=UTC)
    assert parse_instant("NOW", now=now) == now
    assert parse_instant("NOW-2DAYS", now=now) == datetime(2024, 2, 28, 12, 0, tzinfo=UTC)
    assert parse_instant("*") is None
    with pytest.raises(ValueError):
        parse_instant("yesterday")


def test_view_model_carries_the_contract_fields() -> None:
    wire = parse_query(S2_QUERY).to_view_model().to_wire()
    assert wire["platformName"] == "Sentinel-2" and wire["cloudCoverageTo"] == 30.0
    assert wire["startFromDate"] == "2023-01-01T00:00:00.000Z" and wire["relativeOrbit"] == 22


# -- malformed queries -------------------------------------------------------------------------
@pytest.mark.parametrize("text", [
    "( platformname:Sentinel-2", "platformname:Sentinel-2 )", '( footprint:"intersects(POLYGON((7 45',
    "beginPosition:[2023",
    "]", "( beginPosition:[tomorrow TO 2023-01-01] )", "( beginPosition:2023-01-01 )",
    "( relativeorbitnumber:abc AND platformname:Sentinel-1 )", "( cloudcoverpercentage:[a TO b] )",
'( footprint:"intersects(POLYGON((a b,c d)))" )',
    '( footprint:"within(LINESTRING(1 2,3 4))" )', "NOT platformname:Sentinel-1",
"(" * 200 + ")" * 200,
    "x" * 40_000, "( platformname:S2 )\x00", "( beginPosition:[2023-01-01 TO 2023-01-02 TO 2023-01-03] )",
    "( absoluteorbit:1.5 )", '( footprint:"intersects(POLYGON((1 2 3,4 5)))" )',
])
def test_malformed_queries_are_bad_requests(text: str) -> None:
    with pytest.raises(BadRequest):
        parse_query(text)


def test_backwards_ranges_are_empty_not_malformed() -> None:
    q = parse_query("( platformname:Sentinel-2 AND cloudcoverpercentage:[50 TO 10] AND "
                    "beginPosition:[2023-02-01T00:00:00Z TO 2023-01-01T00:00:00Z] )")
    assert (q.cloud_coverage_from, q.cloud_coverage_to) == (50.0, 10.0)
    assert q.start_from_date == "2023-02-01T00:00:00Z"


@pytest.mark.parametrize("value", [None, 42, ["q"], {"q": 1}, b"( platformname:S2 )"])
def test_a_query_must_be_a_string(value: object) -> None:
    with pytest.raises(BadRequest):
        parse_query(value)


# -- fuzzing: garbage never raises anything but BadRequest -----------------------------------------
FRAGMENTS = [
    "(", ")", "((", "))", '"', "[", "]", ":", " ", "  ", ",", "AND", " AND ", "OR", " OR (", "NOT", "*", "=",
    "platformname", "platformname:", "Sentinel-1", "Sentinel-2 ", "footprint:", '"intersects(POLYGON((',
    "intersects(POINT(", "7.0 45.0", "1e400 2", "-200 95", ")))\"", "beginPosition:[", "endPosition:[", " TO ",
    "NOW", "NOW-3DAYS", "2023-01-01T00:00:00.000Z", "2023-13-45", "]AND", "cloudcoverpercentage:", "[0 TO 30]",
    "relativeorbitnumber:", "117", "absoluteorbit:", "-5", "99999999999", "producttype:", "GRD", "filename:",
    "S1A_*", "offset=", "limit=", "12", "\\", "\\\"", "é", "\u202e", "\t", "\n", "key:value", "::", "[*", "*]",
    "productMainClass:Copernicus-marine", "name:", "swathidentifier:", "nan", "inf", "0x10",
]


def _garbage(rng: random.Random) -> str:
    if rng.random() < 0.3:
        return "".join(rng.choice(string.printable + "éΩ\u0000") for _ in range(rng.randint(0, 60)))
    return "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 25)))


def _mutated(rng: random.Random, base: str) -> str:
    chars = list(base)
    for _ in range(rng.randint(1, 6)):
        op = rng.random()
        pos = rng.randint(0, len(chars))
        if op < 0.4 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.8:
            chars.insert(pos, rng.choice('()[]":, ANDOR*-.0123456789TZ'))
        elif chars:
            i, j = rng.randrange(len(chars)), rng.randrange(len(chars))
            chars[i], chars[j] = chars[j], chars[i]
    return "".join(chars)


@pytest.mark.parametrize("seed", range(8))
def test_fuzzing_never_raises_unexpected_errors(seed: int) -> None:
    rng = random.Random(seed)
    bases = [S2_QUERY, S1_QUERY, S2_NO_BBOX, S3_QUERY, VIIRS_QUERY, L8_QUERY,
             web_filter(web_geoselection(46, 7, 45, 8), web_mission("Sentinel-1", "producttype:GRD"))]
    parsed = rejected = 0
    for i in range(600):
        text = _garbage(rng) if i % 2 else _mutated(rng, rng.choice(bases))
        try:
            result = parse_query(text)
        except BadRequest:
            rejected += 1
            continue
        parsed += 1
        assert isinstance(result, SearchQuery)
        result.to_view_model()  # always a valid contract model
        result.interval()  # dates that parsed can be compared
        assert result.bbox is None or (-180 <= result.bbox[0] <= result.bbox[2] <= 180)
    assert parsed and rejected  # the generator reaches both outcomes
