"""The app store: the apps a user can see, the market list and store page, store details, categories,
publishers and the sharing of apps.

Rules (contract /processors and /processormedia, gaps §1, §3, §4; where they are silent the choice is
written here):
- ``getdeployed``: owned, shared and public apps (admins: all), by name; ``minuteTimeout`` shows 0 for
  "no timeout", ``getprocessor`` shows -1 (gaps §1); ``sharedWithMe`` is true when the caller holds a
  sharing; ``readOnly`` when the caller may not write the app;
- the store shows apps whose ``showInStore`` is true that the caller can read (public, owned, shared,
  admin); the market list filters by categories (any of them), publishers (user ids), name (part of
  the name or friendly name, any case), score (average vote at least this; apps without votes have
  -1), ``minPrice``/``maxPrice`` on the on-demand price (a negative or missing bound is no bound);
  sorts by ``orderBy`` (any case) ``name`` (the friendly name, else the name: the default, also for a
  value it does not know, as the original server), ``price``, ``date`` (last update), ``score`` or
  ``votes``, ``orderDirection`` -1 descending, anything else ascending; pages by ``page`` (from 0;
  negative is 0) and ``itemsPerPage`` (default 12, also for 0 or less; at most 1000);
- the store page (``getmarketdetail``): 400 for an unknown app, 403 when the caller cannot read it;
  ``images`` are the gallery's links; ``purchased`` counts the runs of the app recorded here;
- ``updatedetails`` (a web-client call outside the contract): write rights; prices are numbers of 0
  or more, categories must be known ids, text fields are bounded; what the body leaves out stays;
- categories: a built-in list, replaced by the JSON file ``settings.app_categories_file`` (a list of
  ``{"id", "category"}``); ``count`` is the number of store apps the caller can see in each;
- publishers: owners of store apps; an app that is not public counts only for its owner, users it is
  shared with and admins; the nickname falls back from public nickname to name to user id;
- sharing: the common module, with the processors' rule that a repeated share fails ("Already
  shared", gaps §0.8); the list needs read rights through ownership, a sharing or admin (else null).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...dates import now_ms
from ...errors import MSG_NO_ACCESS_RIGHTS, BadRequest, Forbidden, ServerFailure
from ...store import Collection
from ..accounts.identity import User, UserService
from ..accounts.sharing import ShareOutcome, SharingService
from ..processes.processes import PROCESSOR_OPERATIONS
from ..processes.run_scope import scope_name
from ..products.images import GALLERY_SLOTS, PROCESSORS, ImageService, split_extension
from .app_records import AppRecords, is_public, processor_resource
from .reviews import ReviewService

BUILT_IN_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("agriculture", "Agriculture"),
    ("atmosphere", "Atmosphere"),
    ("climate", "Climate"),
    ("disaster", "Disaster Management"),
    ("environment", "Environment"),
    ("forestry", "Forestry"),
    ("hydrology", "Hydrology"),
    ("land-cover", "Land Cover"),
    ("marine", "Marine and Coasts"),
    ("urban", "Urban"),
    ("tools", "Tools"),
)
DEFAULT_ITEMS_PER_PAGE = 12
MAX_ITEMS_PER_PAGE = 1000
MAX_IMAGES = len(GALLERY_SLOTS)
ORDER_ALIASES = {"name": "name", "friendlyname": "name", "score": "score", "votes": "votes", "price": "price",
                 "date": "date"}
TEXT_LIMITS = {"friendlyName": 200, "link": 1000, "email": 320, "longDescription": 20000,
               "areaParameterName": 200, "processorDescription": 4000}
PRICE_FIELDS = {"ondemandPrice": "ondemandPrice", "squareKilometerPrice": "squareKilometerPrice",
                "subscriptionPrice": "subscriptionPrice"}


def placeholder_link(doc: Mapping[str, Any]) -> str:
    index = int(doc.get("placeholderIndex") or 1)
    return f"assets/img/placeholder/placeholder_{min(max(index, 1), 7)}.jpg"


def load_categories(path: str) -> list[tuple[str, str]]:
    """The categories of the settings file, or the built-in list; a bad file is a clear error."""
    if not path:
        return list(BUILT_IN_CATEGORIES)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ServerFailure(f"the app categories file {path} cannot be read: {e}") from e
    if not isinstance(data, list) or not all(
            isinstance(c, dict) and isinstance(c.get("id"), str) and c["id"] and isinstance(c.get("category"), str)
            for c in data):
        raise ServerFailure(f"the app categories file {path} must be a list of {{\"id\", \"category\"}} objects")
    return [(c["id"], c["category"]) for c in data]


def _price(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        raise BadRequest(f"{what} must be a number of 0 or more")
    return float(value)


class AppStoreService:
    def __init__(self, apps: AppRecords, users: UserService, sharing: SharingService, reviews: ReviewService,
                 images: ImageService, processes: Collection, categories_file: str = "",
                 account_scope_apps: Sequence[str] = ()) -> None:
        self.apps = apps
        self.account_scope_apps = tuple(account_scope_apps)
        self.users = users
        self.sharing = sharing
        self.reviews = reviews
        self.images = images
        self.processes = processes
        self.categories_file = categories_file

    # -- shared pieces ---------------------------------------------------------------------------
    def nickname(self, user_id: str, cache: dict[str, str] | None = None) -> str:
        """The publisher's public nickname, else name, else id (``cache``: one lookup per user in a listing)."""
        if cache is not None and user_id in cache:
            return cache[user_id]
        doc = self.users.get(user_id)
        name = self.users.display_name(doc) if doc else user_id
        if cache is not None:
            cache[user_id] = name
        return name

    def categories(self) -> list[tuple[str, str]]:
        return load_categories(self.categories_file)

    def in_store(self, caller: User) -> list[dict[str, Any]]:
        """Apps shown in the store that the caller can read."""
        return [d for d in self.apps.visible_to(caller) if d.get("showInStore")]

    def deployed_view(self, caller: User, doc: Mapping[str, Any], *, no_timeout: int,
                      nicknames: dict[str, str] | None = None) -> dict[str, Any]:
        resource = processor_resource(doc)
        minutes = doc.get("minuteTimeout")
        timeout = int(minutes) if minutes is not None else -1
        return {
            "processorId": doc["processorId"], "processorName": doc.get("name") or "",
            "processorVersion": doc.get("version") or "1", "processorDescription": doc.get("description") or "",
            "imgLink": placeholder_link(doc), "logo": doc.get("logo") or "", "publisher": doc.get("userId") or "",
            "publisherNickName": self.nickname(str(doc.get("userId") or ""), nicknames),
            "paramsSample": doc.get("paramsSample") or "", "isPublic": 1 if is_public(doc) else 0,
            "minuteTimeout": timeout if timeout > 0 else no_timeout, "type": doc.get("type") or "",
            "sharedWithMe": self.sharing.sharing(resource, caller.user_id) is not None,
            "readOnly": not self.sharing.can_write(caller, resource),
            "deploymentOngoing": bool(doc.get("deploymentOngoing")), "lastUpdate": float(doc.get("lastUpdate") or 0.0),
        }

    # -- listing ---------------------------------------------------------------------------------
    def deployed(self, caller: User) -> list[dict[str, Any]]:
        docs = sorted(self.apps.visible_to(caller), key=lambda d: (str(d.get("name") or ""), d["processorId"]))
        nicknames: dict[str, str] = {}
        return [self.deployed_view(caller, d, no_timeout=0, nicknames=nicknames) for d in docs]

    def get(self, caller: User, processor_id: str | None, name: str | None) -> dict[str, Any]:
        doc = self.apps.get(processor_id) if processor_id else self.apps.by_name(name)
        if doc is None or not self.apps.can_read(caller, doc):
            raise BadRequest("Invalid processor.")
        return self.deployed_view(caller, doc, no_timeout=-1)

    def market_list(self, caller: User, flt: Mapping[str, Any]) -> list[dict[str, Any]]:
        page = max(0, int(flt.get("page") or 0))
        per_page = int(flt.get("itemsPerPage") or 0)
        per_page = DEFAULT_ITEMS_PER_PAGE if per_page <= 0 else min(per_page, MAX_ITEMS_PER_PAGE)
        order_by = ORDER_ALIASES.get(str(flt.get("orderBy") or "").lower(), "name")
        descending = flt.get("orderDirection") == -1
        categories = set(flt.get("categories") or [])
        publishers = set(flt.get("publishers") or [])
        name = str(flt.get("name") or "").strip().lower()
        min_score = flt.get("score")
        min_price = flt.get("minPrice")
        max_price = flt.get("maxPrice")
        scores = self.reviews.scores()
        rows: list[tuple[dict[str, Any], float, int]] = []
        for doc in self.in_store(caller):
            score, votes = scores.get(doc["processorId"], (-1.0, 0))
            price = float(doc.get("ondemandPrice") or 0.0)
            if categories and not categories & set(doc.get("categories") or []):
                continue
            if publishers and doc.get("userId") not in publishers:
                continue
            if name and name not in str(doc.get("name") or "").lower() \
                    and name not in str(doc.get("friendlyName") or "").lower():
                continue
            if min_score and score < float(min_score):
                continue
            if min_price is not None and min_price >= 0 and price < min_price:
                continue
            if max_price is not None and max_price >= 0 and price > max_price:
                continue
            rows.append((doc, score, votes))
        keys = {
            "name": lambda r: str(r[0].get("friendlyName") or r[0].get("name") or "").lower(),
            "score": lambda r: r[1], "votes": lambda r: r[2],
            "price": lambda r: float(r[0].get("ondemandPrice") or 0.0),
            "date": lambda r: float(r[0].get("lastUpdate") or 0.0),
        }
        rows.sort(key=lambda r: str(r[0].get("name") or ""))
        rows.sort(key=keys[order_by], reverse=descending)
        nicknames: dict[str, str] = {}
        return [self.market_view(caller, *row, nicknames=nicknames)
                for row in rows[page * per_page:(page + 1) * per_page]]

    def market_view(self, caller: User, doc: Mapping[str, Any], score: float, votes: int,
                    nicknames: dict[str, str] | None = None) -> dict[str, Any]:
        resource = processor_resource(doc)
        return {
            "processorId": doc["processorId"], "processorName": doc.get("name") or "",
            "processorDescription": doc.get("description") or "", "imgLink": placeholder_link(doc),
            "publisher": doc.get("userId") or "",
            "publisherNickName": self.nickname(str(doc.get("userId") or ""), nicknames), "score": score,
            "votes": votes, "friendlyName": doc.get("friendlyName") or doc.get("name") or "",
            "price": float(doc.get("ondemandPrice") or 0.0),
            "squareKilometerPrice": float(doc.get("squareKilometerPrice") or 0.0),
            "isMine": doc.get("userId") == caller.user_id, "buyed": False, "logo": doc.get("logo") or "",
            "readOnly": not self.sharing.can_write(caller, resource),
        }

    def gallery(self, doc: Mapping[str, Any], base_url: str) -> list[str]:
        name = str(doc.get("name") or "")
        try:
            folder = self.images.folder_path(PROCESSORS, name)
            entries = sorted(folder.iterdir()) if folder.is_dir() else []
        except (OSError, BadRequest):
            return []
        slots = {split_extension(e.name)[0]: e.name for e in entries if e.is_file()}
        return [self.images.link(base_url, PROCESSORS, name, slots[s]) for s in GALLERY_SLOTS if s in slots]

    def market_detail(self, caller: User, processor_name: str, base_url: str) -> dict[str, Any]:
        doc = self.apps.by_name(processor_name)
        if doc is None:
            raise BadRequest("Invalid processor.")
        if not self.apps.can_read(caller, doc):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        score, votes = self.reviews.score_of(doc["processorId"])
        names = dict(self.categories())
        ids = [c for c in doc.get("categories") or [] if isinstance(c, str)]
        runs = self.processes.count(lambda p: p.get("operationType") in PROCESSOR_OPERATIONS,
                                    productName=doc.get("name"))
        out = self.market_view(caller, doc, score, votes)
        out.pop("price", None)
        out.pop("votes", None)
        out.update({
            "link": doc.get("link") or "", "email": doc.get("email") or "",
            "ondemandPrice": float(doc.get("ondemandPrice") or 0.0),
            "areaParameterName": doc.get("areaParameterName") or "",
            "subscriptionPrice": float(doc.get("subscriptionPrice") or 0.0),
            "updateDate": float(doc.get("lastUpdate") or 0.0), "publishDate": float(doc.get("uploadDate") or 0.0),
            "categories": ids, "categoryNames": [names.get(c, c) for c in ids],
            "images": self.gallery(doc, base_url), "longDescription": doc.get("longDescription") or "",
            "showInStore": bool(doc.get("showInStore")), "maxImages": MAX_IMAGES, "reviewsCount": votes,
            "purchased": runs, "totalRuns": 0, "userRuns": 0,
            "runScope": scope_name(self.account_scope_apps, str(doc.get("name") or "")),
        })
        if not out["logo"]:
            out.pop("logo")
        return out

    # -- editing ---------------------------------------------------------------------------------
    def update_details(self, caller: User, processor_id: str, data: Mapping[str, Any]) -> dict[str, Any]:
        doc = self.apps.get(processor_id)
        if doc is None:
            raise BadRequest("Invalid processor.")
        if not self.apps.can_write(caller, doc):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        changes: dict[str, Any] = {}
        for wire, limit in TEXT_LIMITS.items():
            value = data.get(wire)
            if value is None:
                continue
            if not isinstance(value, str) or len(value) > limit:
                raise BadRequest(f"{wire} must be a text of at most {limit} characters")
            changes["description" if wire == "processorDescription" else wire] = value.strip()
        for wire, stored in PRICE_FIELDS.items():
            if data.get(wire) is not None:
                changes[stored] = _price(data[wire], wire)
        if data.get("categories") is not None:
            known = {c for c, _ in self.categories()}
            wanted = data["categories"]
            if not isinstance(wanted, list) or not all(isinstance(c, str) and c in known for c in wanted):
                raise BadRequest(f"categories must be ids among: {', '.join(sorted(known))}")
            changes["categories"] = list(dict.fromkeys(wanted))
        if data.get("showInStore") is not None:
            if not isinstance(data["showInStore"], bool):
                raise BadRequest("showInStore must be true or false")
            changes["showInStore"] = data["showInStore"]
        changes["lastUpdate"] = now_ms()
        updated = self.apps.processors.update(doc["processorId"], changes)
        if updated is None:
            raise BadRequest("Invalid processor.")
        return updated

    # -- categories and publishers ---------------------------------------------------------------
    def category_counts(self, caller: User) -> list[dict[str, Any]]:
        store = self.in_store(caller)
        return [{"id": cid, "category": label,
                 "count": sum(1 for d in store if cid in (d.get("categories") or []))}
                for cid, label in self.categories()]

    def publishers(self, caller: User) -> list[dict[str, Any]]:
        counts: dict[str, int] = {}
        for doc in self.in_store(caller):
            owner = str(doc.get("userId") or "")
            counts[owner] = counts.get(owner, 0) + 1
        rows = [{"publisher": uid, "nickName": self.nickname(uid), "appCount": n} for uid, n in counts.items()]
        rows.sort(key=lambda r: (str(r["nickName"]).lower(), r["publisher"]))
        return rows

    # -- sharing ---------------------------------------------------------------------------------
    def _app(self, processor_id: str | None) -> dict[str, Any]:
        doc = self.apps.get(processor_id)
        if doc is None:
            raise BadRequest("Invalid processor")
        return doc

    def share(self, caller: User, processor_id: str | None, user_id: str | None, rights: str | None) -> ShareOutcome:
        return self.sharing.share(caller, processor_resource(self._app(processor_id)), user_id, rights,
                                  repeat_fails=True)

    def unshare(self, caller: User, processor_id: str | None, user_id: str | None) -> None:
        self.sharing.unshare(caller, processor_resource(self._app(processor_id)), user_id)

    def sharings(self, caller: User, processor_id: str | None) -> list[dict[str, Any]]:
        resource = processor_resource(self._app(processor_id))
        self.sharing.require_read(caller, resource)
        return [{"userId": s["userId"], "permissions": s["permissions"]} for s in self.sharing.sharings_of(resource)]
