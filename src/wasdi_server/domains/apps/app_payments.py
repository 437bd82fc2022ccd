"""Paying for apps: on-demand purchases through a payment provider, and area-priced runs paid in credits.

``app_payments`` (key ``appPaymentId``): ``{appPaymentId, paymentName, userId, processorId, buySuccess,
buyDate, runDate, createdDate}`` (epoch ms; ``runDate`` ``None`` until a run consumes the payment), plus
``paymentProvider, checkoutSessionId, paymentIntentId`` once a checkout starts or is paid.

Rules (contract /processors payments and States table, gaps §9; where they are silent the choice is
written here):
- an app is priced on demand when ``ondemandPrice > 0`` and per area when ``squareKilometerPrice > 0``
  (both: the area price applies); its owner, admins and every user it is shared with never pay: the
  contract's ``isAppPurchased`` says a shared user "can run the priced app now", and ``getcredits``
  charges them 0, so the run path agrees (the original charged ``read`` sharers at run time only);
- ``addAppPayment``: ``paymentName``, ``processorId`` and ``buyDate`` (ISO text) are required (400);
  an unknown app is 404, one the caller cannot read 403, a free app 400; the payment is created
  unpaid and its id returned;
- ``onDemandPaymentUrl``: only the buyer gets a checkout for their own unpaid payment of that app
  (403 / 400); the amount is the app's on-demand price in cents of the configured currency;
- the confirmation callback verifies the checkout with the provider and marks the payment paid
  (once); the answer is a page that closes the browser window;
- ``isAppPurchased``: true for a free app, the owner, any sharing holder, an admin, or a paid payment
  not yet consumed;
- ``byAppPaymentId``: the caller's own payment (admins: any); another user's is answered as unknown (404);
- ``authorize_run`` (called by the run path before a run): consumes the oldest paid unused payment
  of an on-demand app, or deducts the area price in credits from the caller's paid credit packages,
  oldest first (unpaid packages never count, unlike the original's run path), all or nothing;
- credits of an area-priced run (gaps §9): the box is ``params[areaParameterName]`` as
  ``{southWest:{lat,lng}, northEast:{lat,lng}}``, else ``params["AOI"]`` as ``"N,W,S,E"``;
  ``width = (E-W)*111.32*cos(avgLat)`` with the latitude in degrees given to a radians cosine, exactly
  as the original does (so clients see the same numbers), ``height = (N-S)*111.32``, credits =
  ``price*|width*height|`` rounded half up to 2 decimals;
- ``on_app_delete``: an on-demand app with paid purchases not yet used cannot be deleted (its
  buyers would lose what they paid): 400; otherwise its unpaid purchases are dropped and paid ones
  kept as the buyers' records.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from urllib.parse import unquote

from ...dates import format_ms_or_none, now_ms, parse_epoch_ms
from ...errors import MSG_NO_ACCESS_RIGHTS, BadRequest, DomainError, Forbidden, NotFound, ServerFailure
from ...json_reader import JsonReader, JsonRefused
from ...providers.payments import CheckoutRequest, PaymentProviders
from ...store import Collection
from ..accounts.identity import User, valid_email
from ..accounts.sharing import SharingService
from .app_records import AppRecords, processor_resource

log = logging.getLogger("wasdi_server.app_payments")

KM_PER_DEGREE = 111.32
MAX_NAME_LENGTH = 200
CLOSE_WINDOW_PAGE = ("<!doctype html><html><head><meta charset=\"utf-8\"><title>Payment confirmed</title></head>"
                     "<body><p>Payment confirmed. You can close this window.</p>"
                     "<script>window.close();</script></body></html>")
NOT_PAID = "The app has a price and has not be paid"
AREA_PROBLEM = "The app declares a price per square km but there is a problem computing it"
NO_CREDITS = "The app has a credit price but no credits found for user"
NOT_ENOUGH_CREDITS = "Not enough credits"


def parse_iso_ms(value: Any) -> float:
    """Epoch ms of an ISO date text (``...Z`` or with an offset; no offset means UTC)."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest("buyDate is required (ISO date text)")
    try:
        return parse_epoch_ms(value)
    except ValueError as e:
        raise BadRequest(f"buyDate is not an ISO date: {value.strip()[:40]!r}") from e


def decode_params(reader: JsonReader, encoded: str | None) -> dict[str, Any]:
    """The run parameters from their (URL-encoded) JSON text; ``BadRequest`` when they are not an object."""
    text = (encoded or "").strip()
    if not text:
        raise BadRequest("the parameters are empty")
    for candidate in (unquote(text), text):
        try:
            data = reader.read(candidate, "the parameter text")
        except JsonRefused as e:
            if e.over_a_limit:
                raise
            continue
        if isinstance(data, dict):
            return data
    raise BadRequest("the parameters are not a JSON object")


def _number(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("not a number")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError("not finite")
    return number


def area_box(reader: JsonReader, params: Mapping[str, Any],
             area_parameter: str) -> tuple[float, float, float, float] | None:
    """``(north, west, south, east)`` of the run's area of interest, or ``None`` when there is none; the
    area parameter may be a JSON text itself (``JsonRefused`` when it breaks the reader's limits)."""
    try:
        box = params.get(area_parameter) if area_parameter else None
        if isinstance(box, str):
            try:
                box = reader.read(box, f"the area parameter {area_parameter[:60]!r}")
            except JsonRefused as e:
                if e.over_a_limit:
                    raise
                return None
        if isinstance(box, Mapping) and isinstance(box.get("southWest"), Mapping) \
                and isinstance(box.get("northEast"), Mapping):
            sw, ne = box["southWest"], box["northEast"]
            return _number(ne["lat"]), _number(sw["lng"]), _number(sw["lat"]), _number(ne["lng"])
        aoi = params.get("AOI")
        if isinstance(aoi, str):
            north, west, south, east = (_number(part) for part in aoi.split(","))
            return north, west, south, east
    except (KeyError, TypeError, ValueError):
        return None
    return None


def area_credits(price_per_km2: float, box: tuple[float, float, float, float]) -> float:
    north, west, south, east = box
    avg_lat = (north + south) / 2.0
    width = (east - west) * KM_PER_DEGREE * math.cos(avg_lat)  # degrees into a radians cosine: gaps §0.18
    height = (north - south) * KM_PER_DEGREE
    credits = price_per_km2 * abs(width * height)
    if not math.isfinite(credits):
        raise BadRequest("the area of interest is out of range")
    value = Decimal(repr(credits))
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def payment_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"appPaymentId": doc["appPaymentId"], "paymentName": doc.get("paymentName") or "",
            "userId": doc.get("userId"), "processorId": doc.get("processorId"),
            "buySuccess": bool(doc.get("buySuccess")), "buyDate": format_ms_or_none(doc.get("buyDate")),
            "runDate": format_ms_or_none(doc.get("runDate"))}


class AppPaymentService:
    def __init__(self, payments_collection: Collection, credit_packages: Collection, apps: AppRecords,
                 sharing: SharingService, payments: PaymentProviders, json_reader: JsonReader | None = None) -> None:
        self.app_payments = payments_collection
        self.json_reader = json_reader or JsonReader()
        self.credit_packages = credit_packages
        self.apps = apps
        self.sharing = sharing
        self.payments = payments

    # -- who pays --------------------------------------------------------------------------------
    def pays_nothing(self, caller: User, doc: Mapping[str, Any]) -> bool:
        """Owner, admin or any sharing: never charged."""
        return self.sharing.can_read(caller, processor_resource(doc))

    def unused_paid(self, caller: User, processor_id: str) -> list[dict[str, Any]]:
        docs = self.app_payments.find(lambda d: bool(d.get("buySuccess")) and not d.get("runDate"),
                                      userId=caller.user_id, processorId=processor_id)
        docs.sort(key=lambda d: (float(d.get("buyDate") or 0.0), d["appPaymentId"]))
        return docs

    # -- purchases -------------------------------------------------------------------------------
    def add(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        name = data.get("paymentName")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME_LENGTH:
            raise BadRequest(f"paymentName is required (at most {MAX_NAME_LENGTH} characters)")
        processor_id = data.get("processorId")
        if not isinstance(processor_id, str) or not processor_id.strip():
            raise BadRequest("processorId is required")
        buy_date = parse_iso_ms(data.get("buyDate"))
        app = self.apps.get(processor_id)
        if app is None:
            raise NotFound("Invalid processor.")
        if not self.apps.can_read(caller, app):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        if float(app.get("ondemandPrice") or 0.0) <= 0:
            raise BadRequest("The app has no on-demand price: it needs no payment.")
        return self.app_payments.insert({
            "appPaymentId": str(uuid.uuid4()), "paymentName": name.strip(), "userId": caller.user_id,
            "processorId": processor_id, "buySuccess": False, "buyDate": buy_date, "runDate": None,
            "createdDate": now_ms(),
        })

    def payment_url(self, caller: User, provider_code: str | None, processor_id: str | None,
                    payment_id: str | None, base_url: str) -> str:
        provider = self.payments.get(provider_code)
        doc = self.app_payments.get(payment_id) if payment_id else None
        if doc is None:
            raise BadRequest("Invalid app payment.")
        if doc.get("userId") != caller.user_id:
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        if doc.get("processorId") != processor_id:
            raise BadRequest("The app payment is not for this app.")
        if doc.get("buySuccess"):
            raise BadRequest("The app payment is already paid.")
        app = self.apps.get(processor_id)
        if app is None:
            raise BadRequest("Invalid processor.")
        price = float(app.get("ondemandPrice") or 0.0)
        if price <= 0:
            raise BadRequest("The app has no on-demand price.")
        success_url, cancel_url = self.payments.checkout_urls(base_url, "processors", provider.code,
                                                              doc["appPaymentId"])
        request = CheckoutRequest(
            client_reference_id=doc["appPaymentId"], product_code=str(app["processorId"]),
            description=f"WASDI app {app.get('friendlyName') or app.get('name')}: one run",
            amount_cents=int(Decimal(repr(price * 100)).quantize(Decimal("1"), rounding=ROUND_HALF_UP)),
            currency=self.payments.settings.currency.upper(), success_url=success_url, cancel_url=cancel_url,
            customer_email=caller.user_id if valid_email(caller.user_id) else None,
        )
        session = self.payments.start_checkout(provider, request)
        self.app_payments.update(doc["appPaymentId"], {"paymentProvider": provider.code,
                                                       "checkoutSessionId": session.session_id})
        return session.url

    def confirm(self, provider_code: str | None, session_id: str | None) -> str:
        """Mark the app payment a paid checkout session names as paid (once); the window-closing page."""
        provider, session = self.payments.verify(provider_code, session_id)
        payment_id = session.client_reference_id
        if not payment_id or self.app_payments.get(payment_id) is None:
            raise ServerFailure("the checkout session does not pay for an app")
        stamp = now_ms()

        def settle(doc: dict[str, Any]) -> dict[str, Any] | None:
            if doc.get("buySuccess"):
                return None
            doc.update(buySuccess=True, buyDate=stamp, paymentIntentId=session.payment_intent_id,
                       paymentProvider=provider.code, checkoutSessionId=session.session_id)
            return doc

        try:
            self.app_payments.modify(payment_id, settle)
        except DomainError:
            raise
        except Exception as e:
            log.exception("recording the payment of app payment %s failed", payment_id)
            raise ServerFailure("the payment could not be recorded") from e
        return CLOSE_WINDOW_PAGE

    def is_purchased(self, caller: User, processor_id: str | None) -> bool:
        app = self.apps.get(processor_id)
        if app is None:
            raise NotFound("Invalid processor.")
        if float(app.get("ondemandPrice") or 0.0) <= 0:
            return True
        if self.pays_nothing(caller, app):
            return True
        return bool(self.unused_paid(caller, str(app["processorId"])))

    def has_unused_payment(self, caller: User, processor_id: str | None) -> bool:
        """Whether ``is_purchased`` rests on a paid run not yet spent (not on a free app or the caller's own)."""
        app = self.apps.get(processor_id)
        return bool(app is not None and float(app.get("ondemandPrice") or 0.0) > 0
                    and not self.pays_nothing(caller, app) and self.unused_paid(caller, str(app["processorId"])))

    def get(self, caller: User, payment_id: str | None) -> dict[str, Any]:
        doc = self.app_payments.get(payment_id) if payment_id else None
        if doc is None or (doc.get("userId") != caller.user_id and not caller.is_admin):
            raise NotFound("Invalid app payment.")
        return payment_view(doc)

    # -- area prices -----------------------------------------------------------------------------
    def credits_for(self, caller: User, processor_id: str | None, encoded_params: str | None) -> float:
        """What ``getcredits`` answers: the credits a run with these parameters costs the caller."""
        params = decode_params(self.json_reader, encoded_params)
        app = self.apps.get(processor_id)
        if app is None:
            raise BadRequest("Invalid processor.")
        # the access check comes first, so that a free private app answers a stranger 403 like a priced one
        if not self.apps.can_read(caller, app):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        price = float(app.get("squareKilometerPrice") or 0.0)
        if price <= 0:
            return 0.0
        if not app.get("areaParameterName"):
            raise ServerFailure("the app declares a price per square km but no area parameter")
        if self.pays_nothing(caller, app):
            return 0.0
        box = area_box(self.json_reader, params, str(app["areaParameterName"]))
        if box is None:
            raise BadRequest("the parameters hold no area of interest")
        return area_credits(price, box)

    # -- the run path ----------------------------------------------------------------------------
    def authorize_run(self, caller: User, processor_doc: Mapping[str, Any], encoded_params: str | None) -> None:
        """Charge a run of a priced app, or raise: the run path calls this before queueing a run."""
        if self.pays_nothing(caller, processor_doc):
            return
        km_price = float(processor_doc.get("squareKilometerPrice") or 0.0)
        if km_price > 0:
            self._charge_credits(caller, processor_doc, km_price, encoded_params)
            return
        if float(processor_doc.get("ondemandPrice") or 0.0) > 0:
            self._consume_payment(caller, str(processor_doc["processorId"]))

    def _consume_payment(self, caller: User, processor_id: str) -> None:
        stamp = now_ms()

        def consume(doc: dict[str, Any]) -> dict[str, Any] | None:
            if not doc.get("buySuccess") or doc.get("runDate"):
                return None
            doc["runDate"] = stamp
            return doc

        with self.app_payments.transaction():
            for doc in self.unused_paid(caller, processor_id):
                if self.app_payments.modify(doc["appPaymentId"], consume) is not None:
                    return
        raise Forbidden(NOT_PAID)

    def _charge_credits(self, caller: User, app: Mapping[str, Any], price: float, encoded: str | None) -> None:
        try:
            box = area_box(self.json_reader, decode_params(self.json_reader, encoded),
                           str(app.get("areaParameterName") or ""))
            if box is None or not app.get("areaParameterName"):
                raise BadRequest(AREA_PROBLEM)
            cost = area_credits(price, box)
        except BadRequest as e:
            raise BadRequest(AREA_PROBLEM) from e
        with self.credit_packages.transaction():
            packages = [d for d in self.credit_packages.find(userId=caller.user_id) if d.get("buySuccess")]
            if not packages:
                raise Forbidden(NO_CREDITS)
            packages.sort(key=lambda d: (float(d.get("buyDate") or 0.0), d["creditPackageId"]))
            if sum(float(d.get("creditsRemaining") or 0.0) for d in packages) + 1e-9 < cost:
                raise Forbidden(NOT_ENOUGH_CREDITS)
            due = Decimal(repr(cost))
            stamp = now_ms()
            for doc in packages:
                if due <= 0:
                    break
                left = Decimal(repr(float(doc.get("creditsRemaining") or 0.0)))
                taken = min(left, due)
                if taken > 0:
                    self.credit_packages.update(doc["creditPackageId"],
                                                {"creditsRemaining": float(left - taken), "lastUpdate": stamp})
                    due -= taken

    # -- cascades --------------------------------------------------------------------------------
    def check_app_delete(self, processor_doc: Mapping[str, Any]) -> None:
        """Refuse an owner's delete of an app whose buyers still hold paid, unused runs."""
        pending = self.app_payments.count(lambda d: bool(d.get("buySuccess")) and not d.get("runDate"),
                                          processorId=processor_doc.get("processorId"))
        if pending:
            raise BadRequest(f"The app has {pending} paid run(s) not used yet: it cannot be deleted now.")

    def on_app_delete(self, processor_doc: Mapping[str, Any]) -> None:
        """The app is going: its unpaid purchases go with it (paid ones stay, as the buyers' history)."""
        self.app_payments.delete_where(lambda d: not d.get("buySuccess"), processorId=processor_doc.get("processorId"))

    def delete_all_of_user(self, user_id: str) -> None:
        """Remove every app payment of the user (idempotent)."""
        self.app_payments.delete_where(userId=user_id)
