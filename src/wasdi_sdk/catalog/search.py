"""/search: queries against external data providers."""

from ._types import (
    C_MINUS_ONE,
    C_NULL,
    INT,
    Endpoint,
    Style,
    list_body,
    models,
    q,
    qreq,
)

_PROVIDERS = q("providers", default="AUTO", doc="Comma separated provider codes; AUTO lets the server choose.")

ENDPOINTS = (
    Endpoint("search.count", "GET", "/search/query/count", Style.EMPTY, C_MINUS_ONE,
             query=(qreq("query"), _PROVIDERS), response=INT,
             summary="The number of products matching a query; -1 on failure."),
    Endpoint("search.query", "GET", "/search/query", Style.EMPTY, C_NULL,
             query=(qreq("query"), _PROVIDERS, q("offset"), q("limit"), q("sortedby"), q("order")),
             response=models("QueryResultViewModel"), summary="A page of products matching a query."),
    Endpoint("search.list_providers", "GET", "/search/providers", Style.EMPTY, C_NULL,
             response=models("DataProviderViewModel"), summary="The configured data providers."),
    Endpoint("search.count_list", "POST", "/search/query/countlist", Style.EMPTY, C_MINUS_ONE,
             query=(q("providers"),), body=list_body(), response=INT,
             summary="The summed count of several queries; -1 on failure or an empty list."),
    Endpoint("search.query_list", "POST", "/search/querylist", Style.EMPTY, C_NULL,
             query=(_PROVIDERS,), body=list_body(), response=models("QueryResultViewModel"),
             summary="All products matching several queries, fetched page by page and de-duplicated."),
)
