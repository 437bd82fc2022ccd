"""The search query language of /search: parse what the clients send into a typed ``SearchQuery``.

The query is Lucene/OpenSearch-like text (``docs/search.md`` has the full grammar).  Both real
clients are accepted:

- the official library (``searchEOImages``)::

      [<name>]( footprint:"intersects(POLYGON(( lon lat,lon lat,...)))") AND ( platformname:Sentinel-2  AND
      producttype:S2MSI1C AND cloudcoverpercentage:[0 TO 30] AND relativeorbitnumber:22) AND
      ( beginPosition:[2023-01-01T00:00:00.000Z TO 2023-01-31T23:59:59.999Z]AND endPosition:[... TO ...])

- the web client: ``( footprint:"intersects(POLYGON((lng lat,...)))" )``, dates as
  ``toISOString()`` with ``NOW`` / ``*`` open ends, ``ingestionDate:[...]``, the mission part
  `` (platformname:<v> AND <key>:<value> ...)`` and several missions joined with `` OR (``.

How it is read:

- Tokens: ``(`` ``)``, ``"quoted"`` text, ``[range]`` text, ``AND`` / ``OR`` / ``NOT`` and words.
  Spaces around ``:`` are ignored, so ``key : value`` is ``key:value``; runs of spaces do not matter.
- ``key:value``: the value is the rest of the word, or the ``[range]`` / ``"quoted"`` token right
  after the colon.  ``platformname`` takes every word up to the next ``AND``/``OR``/``)``.
  An empty value is no filter.  Every ``key:value`` of the query goes into ``filters`` (the first
  occurrence of a key wins, as it does for the typed fields).
- ``OR``: only the first alternative is read; the operand after each ``OR`` (a group or a term) is
  skipped.  So the web client's multi-mission query searches its first mission.
- ``NOT`` is not supported (it would invert a filter we cannot express): BadRequest.
- The first free word outside parentheses is ``productName`` (leading, or glued after the footprint
  group as the official library sends it); ``*`` means "any name".  Other plain words are ignored.
  ``offset=<n>`` / ``limit=<n>`` words are the legacy
  paging fields (defaults -1 and 10; the REST parameters drive paging).
- ``platformname``: a recognised platform (any case; the short names S1, S2, S3, S5P, S6, L8, ENVI
  too) gives its canonical spelling; otherwise the text as given.  Without one, the platform is
  inferred from the product name's prefix (``S1A_`` → Sentinel-1 …), then from ``filename``;
  ``productMainClass:Copernicus-marine`` is ``CM``.
- ``footprint``: ``intersects(POLYGON((lon lat,...)))`` (or ``POINT(lon lat)``) gives the bounding
  box of the ring; a box outside ±90/±180 is dropped (no spatial filter).  A footprint that is not
  one of these, or coordinates that are not numbers: BadRequest.
- Dates: ``beginPosition`` / ``endPosition`` take ``[A TO B]`` where each end is an ISO date or
  date-time (with or without milliseconds, ``Z`` or an offset), ``NOW``, ``NOW-<n>DAYS`` (or
  HOURS/MINUTES/WEEKS), or ``*`` (open: stored as ``None``).  Anything else: BadRequest.
- ``cloudcoverpercentage:[lo TO hi]`` (``*`` = 0 / 100; a bare number ``n`` means ``[0 TO n]``),
  ``relativeorbitnumber`` / ``absoluteorbit`` integers: BadRequest when not numbers.
- ``filename:S1A_*`` gives ``platformSerialIdentifier`` ``A``; ``swathidentifier`` goes into
  ``timeliness`` for Sentinel-1 (as the original's OData translators do).
- A range running backwards (dates or cloud cover) is not malformed: as in Lucene, it matches nothing.
- Structure: unbalanced parentheses, an unterminated quote or range, nesting deeper than
  ``MAX_DEPTH`` or a query longer than ``MAX_QUERY_LENGTH``: BadRequest.

``parse_query`` never raises anything but ``BadRequest`` (the fuzz tests hold it to that).
"""

from __future__ import annotations

import fnmatch
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from pydantic import ConfigDict, Field

from wasdi_sdk.models import QueryViewModel

from .dates import now_utc, parse_utc
from .errors import BadRequest

MAX_QUERY_LENGTH = 32_768
MAX_DEPTH = 64
DEFAULT_OFFSET = -1
DEFAULT_LIMIT = 10

# -- platforms ---------------------------------------------------------------------------------
PLATFORMS: tuple[str, ...] = (
    "Sentinel-1", "Sentinel-2", "Sentinel-3", "Sentinel-5P", "Sentinel-6", "Landsat-5", "Landsat-7", "Landsat-*",
    "Proba-V", "Envisat", "VIIRS", "ERA5", "CAMS", "PLANET", "DEM", "WorldCover", "StaticFiles", "StaticTiles",
    "IMERG", "CM", "ECOSTRESS", "Earthcache", "TERRA", "WSF", "SWOT", "BIGBANG", "ERS", "MeteOcean", "GLOBATHY",
    "GLOBATHYWASDI",
)
"""The recognised platform names (gaps §6), in their canonical spelling."""

_CANONICAL = {p.lower(): p for p in PLATFORMS}
_ALIASES = {
    "s1": "Sentinel-1", "s2": "Sentinel-2", "s3": "Sentinel-3", "s5p": "Sentinel-5P", "s6": "Sentinel-6",
    "l8": "Landsat-*", "envi": "Envisat", "copernicus-marine": "CM",
}

_NAME_PREFIXES: tuple[tuple[str, str], ...] = (
    # (regex on the upper-cased product name, platform): the original's MissionUtils table
    (r"S1[A-Z]_", "Sentinel-1"), (r"S2[A-Z]_", "Sentinel-2"), (r"S3(A|B|_)_", "Sentinel-3"),
    (r"S5P_", "Sentinel-5P"), (r"S6[AB]?_", "Sentinel-6"), (r"LS05_", "Landsat-5"), (r"LS07_", "Landsat-7"),
    (r"LC0?8", "Landsat-*"), (r"(MER|ASA)_", "Envisat"),
    (r"(RIVER-FLD|VNP21A1D\.|VNP21A1N\.|VNP15A2H\.|VNP43MA3\.|VNP43IA3\.)", "VIIRS"),
    (r"PROBAV_", "Proba-V"), (r"ERA5_", "ERA5"), (r"CAMS_", "CAMS"), (r"PLANET_", "PLANET"),
    (r"COPERNICUS_DSM_COG_", "DEM"), (r"ESA_WORLDCOVER", "WorldCover"), (r"WASDI_STATIC_", "StaticFiles"),
    (r"(3B-|.*IMERG)", "IMERG"), (r"(EEH2TES|EEH2STIC|ECOV002)", "ECOSTRESS"), (r"SKYWATCH_", "Earthcache"),
    (r"(MOD11A2|MCD43A3|MCD43A4)", "TERRA"), (r"GHS_BUILT_S_E2018_GLOBE_R2023A_54009_10_V1_0_", "StaticTiles"),
    (r"WSF2019_V1_", "WSF"), (r"SWOT", "SWOT"), (r"SPEI(01|03|06|12)_", "BIGBANG"),
    (r"SAR_IM[PSM]_1P", "ERS"), (r"METEOCEAN_.*\.NC$", "MeteOcean"), (r".*\.NC$", "CM"),
    (r".*_BATHYMETRY\.TIF$", "GLOBATHY"),
)
_NAME_RULES = [(re.compile(pattern), platform) for pattern, platform in _NAME_PREFIXES]
_SERIAL = re.compile(r"^S[1-6]([A-D])_", re.IGNORECASE)


def canonical_platform(value: str | None) -> str | None:
    """The canonical spelling of a recognised platform (any case, or a short name); else ``value`` trimmed."""
    if value is None:
        return None
    text = " ".join(value.split())
    if not text:
        return None
    lowered = text.lower()
    return _CANONICAL.get(lowered) or _ALIASES.get(lowered) or text


def platform_from_name(name: str | None) -> str | None:
    """The platform a product (file) name belongs to, from its prefix; ``None`` when unknown."""
    if not name:
        return None
    upper = name.upper()
    for rule, platform in _NAME_RULES:
        if rule.match(upper):
            return platform
    return None


def serial_from_name(name: str | None) -> str | None:
    """The satellite's serial letter of a Sentinel product name (``S1A_...`` → ``A``)."""
    match = _SERIAL.match(name or "")
    return match.group(1).upper() if match else None


def platform_matches(wanted: str | None, platform: str | None) -> bool:
    """Whether a product's ``platform`` satisfies the query's ``wanted`` one (``Landsat-*`` is a pattern)."""
    if not wanted:
        return True
    if not platform:
        return False
    return fnmatch.fnmatchcase(platform.lower(), wanted.lower())


# -- dates -------------------------------------------------------------------------------------
_NOW = re.compile(r"^NOW(?:([+-])(\d{1,6})(MINUTE|HOUR|DAY|WEEK)S?)?$", re.IGNORECASE)
_UNITS = {"MINUTE": timedelta(minutes=1), "HOUR": timedelta(hours=1), "DAY": timedelta(days=1),
          "WEEK": timedelta(weeks=1)}


def parse_instant(value: str | None, *, now: datetime | None = None) -> datetime | None:
    """A query date as an aware UTC datetime; ``None`` for ``None``/``*``.  ``ValueError`` when unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text in ("", "*"):
        return None
    moment = _NOW.match(text)
    if moment:
        base = now or now_utc()
        if moment.group(1):
            delta = _UNITS[moment.group(3).upper()] * int(moment.group(2))
            try:
                return base + delta if moment.group(1) == "+" else base - delta
            except OverflowError as e:
                raise ValueError(f"date out of range: {text!r}") from e
        return base
    return parse_utc(text)


# -- the parsed query --------------------------------------------------------------------------
class SearchQuery(QueryViewModel):
    """A parsed query: the contract's ``QueryViewModel`` (with its paging defaults) plus the text it came from."""

    model_config = ConfigDict(frozen=True)

    text: str = ""
    offset: int = DEFAULT_OFFSET
    limit: int = DEFAULT_LIMIT
    filters: dict[str, str] = Field(default_factory=dict)

    @property
    def bbox(self) -> tuple[float, float, float, float] | None:
        """``(west, south, east, north)``, or ``None`` without a spatial filter."""
        if None in (self.west, self.south, self.east, self.north):
            return None
        return (self.west, self.south, self.east, self.north)  # type: ignore[return-value]

    def interval(self, *, now: datetime | None = None) -> tuple[datetime | None, datetime | None]:
        """The whole time window the query allows: earliest start, latest end (``None`` = open)."""
        start = parse_instant(self.start_from_date or self.end_from_date, now=now)
        end = parse_instant(self.end_to_date or self.start_to_date, now=now)
        return start, end

    def begin_range(self, *, now: datetime | None = None) -> tuple[datetime | None, datetime | None]:
        return parse_instant(self.start_from_date, now=now), parse_instant(self.start_to_date, now=now)

    def end_range(self, *, now: datetime | None = None) -> tuple[datetime | None, datetime | None]:
        return parse_instant(self.end_from_date, now=now), parse_instant(self.end_to_date, now=now)

    def with_platform(self, platform: str | None) -> SearchQuery:
        return self.model_copy(update={"platform_name": platform})

    def to_view_model(self) -> QueryViewModel:
        """The contract's ``QueryViewModel`` of this query (without the text)."""
        return QueryViewModel.model_validate(self.model_dump(exclude={"text"}))


# -- tokens ------------------------------------------------------------------------------------
LP, RP, WORD, QUOTED, RANGE, AND, OR, NOT = "(", ")", "word", "quoted", "range", "AND", "OR", "NOT"


@dataclass(frozen=True)
class Token:
    kind: str
    text: str = ""
    glued: bool = False
    """For QUOTED/RANGE: nothing separates it from the token before (``key:[...]``, ``key:"..."``)."""


_COLON_SPACES = re.compile(r"\s*:\s*")
_UNQUOTED_FOOTPRINT = re.compile(
    r"(footprint\s*:\s*)(intersects\s*\(\s*(?:POLYGON\s*\(\s*\([^()\"]*\)\s*\)|POINT\s*\([^()\"]*\))\s*\))",
    re.IGNORECASE)
_PAGING = re.compile(r"^(offset|limit)=(\d{1,9})$", re.IGNORECASE)


def _normalise(text: str) -> str:
    """Quote an unquoted footprint; drop spaces around colons outside quotes."""
    text = _UNQUOTED_FOOTPRINT.sub(lambda m: f'{m.group(1)}"{m.group(2)}"', text)
    parts = text.split('"')
    for i in range(0, len(parts), 2):  # even parts are outside quotes
        parts[i] = _COLON_SPACES.sub(":", parts[i])
    return '"'.join(parts)


def tokenize(text: str) -> list[Token]:
    """The tokens of ``text``; BadRequest on an unterminated quote or range or a stray ``]``."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
            continue
        glued = i > 0 and not text[i - 1].isspace() and bool(tokens)
        if ch == "(":
            tokens.append(Token(LP))
            i += 1
        elif ch == ")":
            tokens.append(Token(RP))
            i += 1
        elif ch == '"':
            j = i + 1
            chunk: list[str] = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                chunk.append(text[j])
                j += 1
            if j >= n:
                raise BadRequest("unterminated quoted text in the query")
            tokens.append(Token(QUOTED, "".join(chunk), glued))
            i = j + 1
        elif ch == "[":
            j = text.find("]", i + 1)
            if j < 0:
                raise BadRequest("unterminated [range] in the query")
            inner = text[i + 1:j]
            if "[" in inner:
                raise BadRequest("nested [range] in the query")
            tokens.append(Token(RANGE, inner.strip(), glued))
            i = j + 1
        elif ch == "]":
            raise BadRequest("']' without '[' in the query")
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '()"[]':
                j += 1
            word = text[i:j]
            if word in (AND, OR, NOT):
                tokens.append(Token(word))
            else:
                tokens.append(Token(WORD, word))
            i = j
    return tokens


# -- the parser --------------------------------------------------------------------------------
@dataclass
class _Collected:
    pairs: list[tuple[str, str, str]] = field(default_factory=list)
    """(key as written, value, kind of value token) in order."""
    first_word: str | None = None
    paging: dict[str, int] = field(default_factory=dict)


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.pos = 0
        self.out = _Collected()

    def peek(self) -> Token | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> Token:
        token = self.tokens[self.pos]
        self.pos += 1
        return token

    def run(self) -> _Collected:
        self.sequence(depth=0)
        if self.peek() is not None:
            raise BadRequest("')' without '(' in the query")
        return self.out

    def sequence(self, depth: int) -> None:
        """Terms up to the matching ``)`` (not consumed) or the end."""
        if depth > MAX_DEPTH:
            raise BadRequest("the query is nested too deeply")
        while True:
            token = self.peek()
            if token is None or token.kind == RP:
                return
            if token.kind == AND:
                self.take()
            elif token.kind == OR:
                self.take()
                self.skip_operand(depth)
            elif token.kind == NOT:
                raise BadRequest("NOT is not supported in search queries")
            else:
                self.term(depth)

    def skip_operand(self, depth: int) -> None:
        token = self.peek()
        if token is None or token.kind == RP:
            return
        if token.kind == LP:
            self.take()
            level = 1
            while level:
                if self.peek() is None:
                    raise BadRequest("'(' without ')' in the query")
                kind = self.take().kind
                level += 1 if kind == LP else -1 if kind == RP else 0
            return
        if token.kind in (AND, OR, NOT):
            return
        self.take()
        if token.kind == WORD and token.text.endswith(":"):
            nxt = self.peek()
            if nxt is not None and nxt.kind in (RANGE, QUOTED) and nxt.glued:
                self.take()

    def term(self, depth: int) -> None:
        token = self.take()
        if token.kind == LP:
            self.sequence(depth + 1)
            closing = self.peek()
            if closing is None:
                raise BadRequest("'(' without ')' in the query")
            self.take()
            return
        if token.kind != WORD:
            return  # a range or quoted text on its own: nothing to read
        word = token.text
        paging = _PAGING.match(word)
        if paging:
            self.out.paging.setdefault(paging.group(1).lower(), int(paging.group(2)))
            return
        if ":" not in word or word.startswith(":"):
            # The product name is the first free word outside parentheses: the official library glues it
            # after the footprint group (``( footprint:"…") AND S2A_*( platformname:…``); later ones are ignored.
            if depth == 0 and self.out.first_word is None:
                self.out.first_word = word
            return
        key, value = word.split(":", 1)
        kind = WORD
        if not value:
            nxt = self.peek()
            if nxt is not None and nxt.kind in (RANGE, QUOTED) and nxt.glued:
                self.take()
                value, kind = nxt.text, nxt.kind
        if key.lower() == "platformname" and kind == WORD:
            words = [value] if value else []
            while (nxt := self.peek()) is not None and nxt.kind == WORD and ":" not in nxt.text \
                    and not _PAGING.match(nxt.text):
                words.append(self.take().text)
            value = " ".join(words)
        self.out.pairs.append((key, value.strip(), kind))


# -- typed fields ------------------------------------------------------------------------------
_RING = re.compile(r"^\s*intersects\s*\(\s*POLYGON\s*\(\s*\((.*?)\)\s*\)\s*\)\s*$", re.IGNORECASE | re.DOTALL)
_POINT = re.compile(r"^\s*intersects\s*\(\s*POINT\s*\((.*?)\)\s*\)\s*$", re.IGNORECASE | re.DOTALL)
_RANGE_SPLIT = re.compile(r"\s+TO\s+", re.IGNORECASE)


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise BadRequest(f"{what}: not a number: {text[:40]!r}") from None
    if not math.isfinite(value):
        raise BadRequest(f"{what}: not a finite number: {text[:40]!r}")
    return value


def parse_footprint(value: str) -> tuple[float, float, float, float] | None:
    """``(north, south, east, west)`` of an ``intersects(POLYGON((...)))`` value; ``None`` when out of range."""
    ring = _RING.match(value)
    point = None if ring else _POINT.match(value)
    if ring is None and point is None:
        raise BadRequest("footprint: expected intersects(POLYGON((lon lat,...))) or intersects(POINT(lon lat))")
    body = (ring or point).group(1)  # type: ignore[union-attr]
    lats: list[float] = []
    lons: list[float] = []
    for pair in body.split(","):
        parts = pair.split()
        if not parts:
            continue
        if len(parts) != 2:
            raise BadRequest(f"footprint: expected 'lon lat', got {pair.strip()[:40]!r}")
        lons.append(_number(parts[0], "footprint"))
        lats.append(_number(parts[1], "footprint"))
    if not lats:
        raise BadRequest("footprint: no coordinates")
    north, south, east, west = max(lats), min(lats), max(lons), min(lons)
    if not (-90 <= south <= north <= 90 and -180 <= west <= east <= 180):
        return None
    return north, south, east, west


def parse_range(value: str, what: str) -> tuple[str | None, str | None]:
    """The two ends of ``A TO B`` (``*`` → ``None``), each checked to be a date."""
    ends = _RANGE_SPLIT.split(value.strip())
    if len(ends) != 2:
        raise BadRequest(f"{what}: expected [<from> TO <to>], got [{value[:60]}]")
    out: list[str | None] = []
    for end in ends:
        text = end.strip()
        try:
            parse_instant(text)
        except ValueError:
            raise BadRequest(f"{what}: not a date: {text[:40]!r}") from None
        out.append(None if text in ("", "*") else text)
    return out[0], out[1]


def parse_cloud(value: str, kind: str) -> tuple[float, float]:
    if kind != RANGE:
        if "<" in value:  # the original also reads "lo<hi"
            low, _, high = value.partition("<")
            return _number(low.strip(), "cloudcoverpercentage"), _number(high.strip(), "cloudcoverpercentage")
        return 0.0, _number(value, "cloudcoverpercentage")
    ends = _RANGE_SPLIT.split(value.strip())
    if len(ends) != 2:
        raise BadRequest(f"cloudcoverpercentage: expected [<lo> TO <hi>], got [{value[:60]}]")
    lo = 0.0 if ends[0].strip() == "*" else _number(ends[0].strip(), "cloudcoverpercentage")
    hi = 100.0 if ends[1].strip() == "*" else _number(ends[1].strip(), "cloudcoverpercentage")
    return lo, hi  # backwards is not malformed: as in Lucene, it matches nothing


def _integer(value: str, what: str) -> int:
    text = value.strip()
    if not re.fullmatch(r"[+-]?\d{1,9}", text):
        raise BadRequest(f"{what}: not an integer: {text[:40]!r}")
    return int(text)


def parse_query(text: Any) -> SearchQuery:
    """The ``SearchQuery`` of a client's query string; ``BadRequest`` when it is malformed."""
    if not isinstance(text, str):
        raise BadRequest("a search query must be a string")
    if len(text) > MAX_QUERY_LENGTH:
        raise BadRequest(f"the search query is longer than {MAX_QUERY_LENGTH} characters")
    if "\x00" in text:
        raise BadRequest("the search query holds a NUL character")
    try:
        collected = _Parser(tokenize(_normalise(text))).run()
    except RecursionError:  # pragma: no cover - MAX_DEPTH keeps recursion far below the limit
        raise BadRequest("the query is nested too deeply") from None

    values: dict[str, Any] = {"text": text, "filters": {}}
    filters: dict[str, str] = values["filters"]
    platform_value: str | None = None
    name_key_value: str | None = None
    marine = False

    def first(name: str, value: Any) -> None:
        if values.get(name) is None:
            values[name] = value

    for key, value, kind in collected.pairs:
        if not value:
            continue
        filters.setdefault(key, f"[{value}]" if kind == RANGE else value)
        low = key.lower()
        if low == "platformname":
            if platform_value is None:
                platform_value = value
        elif low == "footprint":
            if "north" not in values:
                box = parse_footprint(value)
                values.update(zip(("north", "south", "east", "west"), box or (None,) * 4, strict=True))
        elif low in ("beginposition", "endposition"):
            prefix = "start" if low == "beginposition" else "end"
            if kind != RANGE:
                raise BadRequest(f"{key}: expected [<from> TO <to>]")
            lo, hi = parse_range(value, key)
            if f"{prefix}_from_date" not in values and f"{prefix}_to_date" not in values:
                values[f"{prefix}_from_date"], values[f"{prefix}_to_date"] = lo, hi
        elif low == "producttype":
            first("product_type", value)
        elif low == "name":
            name_key_value = name_key_value or value
        elif low == "productlevel":
            first("product_level", value)
        elif low == "cloudcoverpercentage":
            if values.get("cloud_coverage_from") is None:
                values["cloud_coverage_from"], values["cloud_coverage_to"] = parse_cloud(value, kind)
        elif low == "relativeorbitnumber":
            first("relative_orbit", _integer(value, key))
        elif low in ("absoluteorbit", "absoluteorbitnumber"):
            first("absolute_orbit", _integer(value, key))
        elif low == "sensoroperationalmode":
            first("sensor_mode", value)
        elif low == "timeliness":
            first("timeliness", value)
        elif low == "polarisationmode":
            first("polarisation", value)
        elif low == "swathidentifier":
            values.setdefault("_swath", value)
        elif low == "filename":
            first("platform_serial_identifier", serial_from_name(value))
            values.setdefault("_filename", value)
        elif low in ("instrument", "instrumentshortname"):
            first("instrument", value)
        elif low == "productmainclass" and value.lower() == "copernicus-marine":
            marine = True

    name = collected.first_word
    if name is not None and name.strip("*") == "":
        name = None
    if name is not None:
        values["product_name"] = name
    platform = canonical_platform(platform_value)
    if platform is None and marine:
        platform = "CM"
    if platform is None:
        platform = platform_from_name(name) or platform_from_name(values.get("_filename"))
    values["platform_name"] = platform
    if values.get("product_type") is None and name_key_value and platform and platform.startswith("Landsat"):
        values["product_type"] = name_key_value
    swath = values.pop("_swath", None)
    values.pop("_filename", None)
    if swath and platform == "Sentinel-1" and values.get("timeliness") is None:
        values["timeliness"] = swath
    values["offset"] = collected.paging.get("offset", DEFAULT_OFFSET)
    values["limit"] = collected.paging.get("limit", DEFAULT_LIMIT)
    return SearchQuery(**values)
