"""The latest versions of Python packages, asked of a package index's simple API (PEP 691 JSON, or the PEP 503
HTML page when the index serves only that), for /packageManager/listPackages.

Bounded and cached: every package of one listing is asked at once, all within ``timeout`` seconds; an answer is
kept ``cache_seconds`` in the one bounded cache; an index that could not be reached is not asked again for
``retry_seconds``, so a listing never waits on a dead index twice in a row.  The index's host is reached through
the outbound guard, allowed because the operator configured it.  Only final releases count as the latest
version (``1.26.4``, ``2.0.post1``): pre-releases and yanked files are left out.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, wait
from html.parser import HTMLParser
from urllib.parse import urlsplit

import httpx

from ..bounded_cache import BoundedCache
from .outbound import OutboundPolicy, OutboundRefused, open_stream

log = logging.getLogger(__name__)

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
MAX_PAGE_BYTES = 8 * 1024 * 1024
"""A project page larger than this is not read (numpy's is about 1 MB)."""
WORKERS = 8
RELEASE = re.compile(r"^(\d+(?:\.\d+)*)(?:[.-]?post(\d+))?$")
FILE_VERSION = re.compile(r"^(?P<name>.+?)-(?P<version>\d[^-]*?)(?:-.*\.whl|\.tar\.gz|\.zip|\.tar\.bz2|\.tgz)$",
                          re.IGNORECASE)


def normalise(name: str) -> str:
    """The project's name as the index spells its page (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def release_key(version: str) -> tuple[tuple[int, ...], int] | None:
    """A sortable key of a final release (``None`` for a pre-release, a dev build or anything unreadable)."""
    match = RELEASE.match(version.strip())
    if match is None:
        return None
    numbers = tuple(int(n) for n in match.group(1).split("."))
    while len(numbers) > 1 and numbers[-1] == 0:
        numbers = numbers[:-1]
    return numbers, int(match.group(2) or -1)


def is_newer(latest: str, current: str) -> bool:
    """Whether ``latest`` is a later final release than ``current`` (False when either cannot be compared)."""
    new, old = release_key(latest), release_key(current)
    return new is not None and old is not None and new > old


class _Links(HTMLParser):
    """The anchors of a PEP 503 page: file names, and whether each is yanked."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[tuple[str, bool]] = []
        self._yanked: bool | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self._yanked = any(name == "data-yanked" for name, _ in attrs)
            self._text = []

    def handle_data(self, data: str) -> None:
        if self._yanked is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._yanked is not None:
            self.files.append(("".join(self._text).strip(), self._yanked))
            self._yanked = None


def versions_on_page(body: bytes, media_type: str, project: str) -> list[str]:
    """The versions a project page offers (not yanked); ``ValueError`` when it is no simple-API page."""
    files: list[tuple[str, bool]]
    if "json" in media_type:
        data = json.loads(body)
        if not isinstance(data, dict):
            raise ValueError("the index's answer is not a JSON object")
        listed = data.get("versions")
        entries = data.get("files") or []
        files = [(str(f.get("filename") or ""), bool(f.get("yanked"))) for f in entries if isinstance(f, dict)]
        if isinstance(listed, list):  # PEP 700: the versions themselves; yanked files may leave one empty
            live = {_version_of(name, project) for name, yanked in files if not yanked} if files else None
            return [str(v) for v in listed if live is None or str(v) in live]
    else:
        parser = _Links()
        parser.feed(body.decode("utf-8", "replace"))
        files = parser.files
    return [v for v in (_version_of(name, project) for name, yanked in files if not yanked) if v]


def _version_of(file_name: str, project: str) -> str:
    match = FILE_VERSION.match(file_name)
    if match is None or normalise(match.group("name")) != project:
        return ""
    return match.group("version")


def latest_of(versions: Iterable[str]) -> str | None:
    """The latest final release among ``versions`` (``None`` when there is none)."""
    keyed = [(key, v) for v in versions if (key := release_key(v)) is not None]
    return max(keyed)[1] if keyed else None


class PackageIndex:
    """Latest versions from one package index (``url``: its simple API root, e.g. ``https://pypi.org/simple/``)."""

    def __init__(self, url: str, *, timeout: float, cache_seconds: float, retry_seconds: float = 60.0,
                 allowed_hosts: Iterable[str] = (), max_entries: int = 20_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.url = url.rstrip("/") + "/" if url else ""
        self.host = urlsplit(self.url).hostname or ""
        self.timeout = timeout
        self.retry_seconds = retry_seconds
        self.policy = OutboundPolicy.from_hosts([*allowed_hosts, self.host])
        self.clock = clock
        self._answers: BoundedCache[str, str | None] = BoundedCache(max_entries, ttl=cache_seconds, clock=clock)
        self._down_until = 0.0
        self._lock = threading.Lock()

    def latest_versions(self, names: Iterable[str]) -> dict[str, str | None] | None:
        """The latest final release of each package (``None`` for one the index does not know); ``None`` when the
        index could not be asked about all of them in time (unreachable, refused, too slow)."""
        if not self.url:
            return None
        wanted = {normalise(n) for n in names if n}
        found = {name: self._answers.get(name, "") for name in wanted}
        missing = [name for name, value in found.items() if value == ""]
        if missing:
            with self._lock:
                if self.clock() < self._down_until:
                    return None
            fetched = self._fetch_all(missing)
            if fetched is None:
                with self._lock:
                    self._down_until = self.clock() + self.retry_seconds
                return None
            for name, latest in fetched.items():
                self._answers.put(name, latest)
            found.update(fetched)
        return {name: value or None for name, value in found.items()}

    def _fetch_all(self, names: list[str]) -> dict[str, str | None] | None:
        deadline = time.monotonic() + self.timeout
        timeout = httpx.Timeout(self.timeout)
        pool = ThreadPoolExecutor(max_workers=min(WORKERS, len(names)), thread_name_prefix="package-index")
        try:
            with httpx.Client(timeout=timeout, headers={"Accept": f"{JSON_TYPE}, text/html;q=0.1"}) as client:
                futures = {pool.submit(self._fetch, client, name): name for name in names}
                done, pending = wait(futures, timeout=max(0.0, deadline - time.monotonic()))
                if pending:
                    log.warning("the package index %s did not answer for %d packages within %.0f s", self.host,
                                len(pending), self.timeout)
                    for future in pending:
                        future.cancel()
                    return None
                answers: dict[str, str | None] = {}
                for future in done:
                    error = future.exception()
                    if error is not None:
                        log.warning("the package index %s could not be read: %s", self.host, error)
                        return None
                    answers[futures[future]] = future.result()
                return answers
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def _fetch(self, client: httpx.Client, name: str) -> str | None:
        try:
            with open_stream(client, f"{self.url}{name}/", self.policy) as response:
                if response.status_code == 404:
                    return None  # not on this index (a local package): nothing newer to say
                if response.status_code != 200:
                    raise OutboundRefused(f"the index answered {response.status_code} for {name}")
                body = bytearray()
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > MAX_PAGE_BYTES:
                        raise OutboundRefused(f"the index's page of {name} is larger than {MAX_PAGE_BYTES} bytes")
                media_type = response.headers.get("content-type", "")
        except httpx.HTTPError as e:
            raise OutboundRefused(f"the index could not be reached: {type(e).__name__}: {e}") from e
        try:
            return latest_of(versions_on_page(bytes(body), media_type, name))
        except (ValueError, UnicodeError) as e:
            raise OutboundRefused(f"the index's page of {name} is not a simple-API page: {e}") from e

