"""The payment providers' own pages on this server (not contract endpoints, so not in the catalogue).

``/payments/{provider}/{page}/{ref}``:
- ``/payments/local/checkout/<sessionId>``: the ``local`` provider's checkout.  GET shows the product,
  the amount and Pay / Cancel buttons; POST ``action=pay`` marks the session paid and answers 303 to
  the success URL with ``{CHECKOUT_SESSION_ID}`` replaced; ``action=cancel`` answers 303 to the
  cancel URL and leaves the session open (as a real provider does).  Unknown session: 404 page.
- ``/payments/<provider>/canceled/<reference>``: where a canceled checkout lands; a short page.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote

import falcon

from ..providers.payments import SESSION_PLACEHOLDER, LocalPaymentProvider

if TYPE_CHECKING:
    from ..composition import Services

ROUTE = "/payments/{provider}/{page}/{ref}"
MAX_FORM_BYTES = 4096
SECURITY_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
}
STYLE = ("body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#223}"
         "h1{font-size:1.4rem}.amount{font-size:2rem;margin:1rem 0}"
         "button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}.note{color:#667;font-size:.9rem}")


def page(title: str, body: str) -> str:
    """A whole HTML document; ``title`` is escaped here, ``body`` must already be safe HTML."""
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
            f'<meta name="viewport" content="width=device-width,initial-scale=1"><style>{STYLE}</style></head>'
            f"<body>{body}</body></html>")


def amount_text(cents: Any, currency: Any) -> str:
    try:
        value = int(cents) / 100
    except (TypeError, ValueError):
        value = 0.0
    return f"{value:,.2f} {str(currency or '').upper()}".strip()


def success_location(record: dict[str, Any]) -> str:
    return str(record["successUrl"]).replace(SESSION_PLACEHOLDER, quote(str(record["sessionId"]), safe=""))


class CheckoutPage:
    """Serves the provider pages under ``/payments``."""

    def __init__(self, services: Services) -> None:
        self.services = services

    # -- helpers ---------------------------------------------------------------------------------
    @staticmethod
    def _html(resp: falcon.Response, status: int, title: str, body: str) -> None:
        resp.status = falcon.code_to_http_status(status)
        resp.content_type = "text/html; charset=utf-8"
        resp.set_headers(SECURITY_HEADERS)
        resp.text = page(title, body)

    def _not_found(self, resp: falcon.Response) -> None:
        self._html(resp, 404, "Checkout not found",
                   "<h1>Checkout not found</h1><p>This checkout does not exist. Nothing was charged.</p>")

    @staticmethod
    def _redirect(resp: falcon.Response, location: str) -> None:
        resp.status = falcon.HTTP_303
        resp.set_headers(SECURITY_HEADERS)
        resp.location = location
        resp.content_type = "text/plain; charset=utf-8"
        resp.text = ""

    def _local(self) -> LocalPaymentProvider | None:
        provider = self.services.payments.providers.get(LocalPaymentProvider.code)
        return provider if isinstance(provider, LocalPaymentProvider) else None

    # -- GET -------------------------------------------------------------------------------------
    def on_get(self, req: falcon.Request, resp: falcon.Response, provider: str, page: str, ref: str) -> None:
        if page == "canceled":
            self._html(resp, 200, "Payment canceled",
                       "<h1>Payment canceled</h1><p>Nothing was charged. You can close this page and try again "
                       "later.</p>")
            return
        local = self._local() if provider == LocalPaymentProvider.code and page == "checkout" else None
        record = local.record(ref) if local else None
        if record is None:
            self._not_found(resp)
            return
        product = html.escape(str(record.get("description") or record.get("productCode") or "Purchase"))
        amount = html.escape(amount_text(record.get("amountCents"), record.get("currency")))
        if record.get("paymentStatus") == "paid":
            link = html.escape(success_location(record), quote=True)
            self._html(resp, 200, "Paid", f"<h1>Paid</h1><p>{product}</p><p class=\"amount\">{amount}</p>"
                                          f'<p><a href="{link}">Continue</a></p>')
            return
        # No action attribute: the form posts back to this very URL, whatever prefix or proxy served it.
        self._html(resp, 200, "Checkout", (
            f"<h1>Checkout</h1><p>{product}</p><p class=\"amount\">{amount}</p>"
            '<form method="post">'
            '<button type="submit" name="action" value="pay">Pay</button>'
            '<button type="submit" name="action" value="cancel">Cancel</button></form>'
            '<p class="note">Simulated payment (local provider): nothing is charged.</p>'))

    # -- POST ------------------------------------------------------------------------------------
    def on_post(self, req: falcon.Request, resp: falcon.Response, provider: str, page: str, ref: str) -> None:
        local = self._local() if provider == LocalPaymentProvider.code and page == "checkout" else None
        record = local.record(ref) if local else None
        if local is None or record is None:
            self._not_found(resp)
            return
        raw = req.bounded_stream.read(MAX_FORM_BYTES + 1)
        form = parse_qs(raw[:MAX_FORM_BYTES].decode("utf-8", "replace")) if len(raw) <= MAX_FORM_BYTES else {}
        action = (form.get("action") or [""])[0]
        if action == "pay":
            paid = local.pay(ref)
            if paid is None:
                self._not_found(resp)
                return
            self._redirect(resp, success_location(paid))
        elif action == "cancel":
            self._redirect(resp, str(record["cancelUrl"]))
        else:
            self._html(resp, 400, "Bad request",
                       "<h1>Bad request</h1><p>Choose Pay or Cancel on the checkout page.</p>")
