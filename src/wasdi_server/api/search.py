"""/search: queries against the data providers (``services.search``).

Every failure here is style C (count -1, list null), answered centrally from the domain errors the
service raises.  Results go out with every ``QueryResultViewModel`` member, null ones included:
the official library reads ``volumeName`` and ``volumePath`` without checking they exist.
"""

from __future__ import annotations

from typing import Any

from wasdi_sdk.models import DataProviderViewModel, QueryResultViewModel

from .framework import Call, handles


def wire_results(results: list[QueryResultViewModel]) -> list[dict[str, Any]]:
    """The results as wire dicts that keep every member of the model (``null`` when unknown)."""
    return [r.to_wire(keep_none=True) for r in results]


@handles("search.count")
def count(call: Call) -> int:
    return call.services.search.count(call.caller, call.params["query"], call.params["providers"])


@handles("search.query")
def query(call: Call) -> list[dict[str, Any]]:
    p = call.params
    return wire_results(call.services.search.query(call.caller, p["query"], p["providers"], p["offset"], p["limit"],
                                                   p["sortedby"], p["order"]))


@handles("search.list_providers")
def list_providers(call: Call) -> list[DataProviderViewModel]:
    return call.services.search.list_providers()


@handles("search.count_list")
def count_list(call: Call) -> int:
    return call.services.search.count_list(call.caller, call.body, call.params["providers"])


@handles("search.query_list")
def query_list(call: Call) -> list[dict[str, Any]]:
    return wire_results(call.services.search.query_list(call.caller, call.body, call.params["providers"]))
