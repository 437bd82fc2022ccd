"""Presets for the public STAC catalogues: ``preset = "<name>"`` in a ``search_providers`` table fills the URL,
the collections, the product-type and platform maps, the asset keys, the filter language and the paging of that
API, and how its downloads authenticate; any option written beside it wins over the preset's.

- ``earth-search``: Element 84's Earth Search v1 (Sentinel-1 GRD, Sentinel-2 L1C and L2A, Landsat Collection 2
  Level-2, Copernicus DEM), open assets on AWS;
- ``planetary-computer``: Microsoft's Planetary Computer (the same missions), assets on Azure Blob Storage that
  are downloaded through links its SAS API signs (no account needed);
- ``copernicus-dataspace``: the Copernicus Data Space Ecosystem's STAC catalogue (Sentinel-1, -2, -3, -5P), whose
  downloads need a bearer token of a CDSE account: ``username`` and ``password`` (or ``password_env``, the name of
  an environment variable holding it) in the operator's settings.

Each preset's field names and hosts follow that API's public documentation (``docs/search.md`` names the pages).
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "earth-search": {
        "url": "https://earth-search.aws.element84.com/v1",
        "description": "Earth Search (Element 84, on AWS)",
        "link": "https://earth-search.aws.element84.com/v1",
        "collections": {"Sentinel-1": "sentinel-1-grd", "Sentinel-2": "sentinel-2-l2a",
                        "Landsat-*": "landsat-c2-l2", "DEM": "cop-dem-glo-30"},
        "product_types": {"S2MSI1C": "sentinel-2-l1c", "S2MSI2A": "sentinel-2-l2a", "GRD": "sentinel-1-grd"},
        "asset_keys": ["visual", "vv", "data", "red"],
        "filter_mode": "query",
        "page_size": 1000,
    },
    "planetary-computer": {
        "url": "https://planetarycomputer.microsoft.com/api/stac/v1",
        "description": "Microsoft Planetary Computer",
        "link": "https://planetarycomputer.microsoft.com/catalog",
        "collections": {"Sentinel-1": "sentinel-1-grd", "Sentinel-2": "sentinel-2-l2a",
                        "Landsat-*": "landsat-c2-l2", "DEM": "cop-dem-glo-30"},
        "product_types": {"S2MSI2A": "sentinel-2-l2a", "GRD": "sentinel-1-grd", "RTC": "sentinel-1-rtc"},
        "asset_keys": ["visual", "vv", "data", "red"],
        "filter_mode": "cql2",
        "page_size": 1000,
        "auth": "sas",
        "sign_url": "https://planetarycomputer.microsoft.com/api/sas/v1/sign",
        "auth_hosts": [".blob.core.windows.net"],
    },
    "copernicus-dataspace": {
        "url": "https://stac.dataspace.copernicus.eu/v1",
        "description": "Copernicus Data Space Ecosystem",
        "link": "https://dataspace.copernicus.eu",
        "collections": {"Sentinel-1": "sentinel-1-grd", "Sentinel-2": "sentinel-2-l2a",
                        "Sentinel-3": "sentinel-3-olci-1-efr", "Sentinel-5P": "sentinel-5p-l2-no2-offl"},
        "product_types": {"S2MSI1C": "sentinel-2-l1c", "S2MSI2A": "sentinel-2-l2a", "GRD": "sentinel-1-grd",
                          "SLC": "sentinel-1-slc"},
        # the whole product (the SAFE archive), as WASDI imports it; its https alternate is the download link
        "asset_keys": ["Product", "PRODUCT", "product", "TCI_10m", "visual"],
        "filter_mode": "cql2",
        "page_size": 1000,
        "auth": "oidc",
        "token_url": "https://identity.dataspace.copernicus.eu/auth/realms/CDSE/protocol/openid-connect/token",
        "client_id": "cdse-public",
        "auth_hosts": ["download.dataspace.copernicus.eu", "zipper.dataspace.copernicus.eu"],
    },
}


def with_preset(entry: dict[str, Any]) -> dict[str, Any]:
    """The provider table with its preset's options filled in (the table's own win); ``ValueError`` for an unknown
    preset."""
    name = entry.get("preset")
    if name is None:
        return entry
    preset = PRESETS.get(str(name).strip().lower())
    if preset is None:
        raise ValueError(f"search provider {entry.get('code')}: unknown preset {name!r} "
                         f"(known: {', '.join(sorted(PRESETS))})")
    merged = {"type": "stac", **preset, **{k: v for k, v in entry.items() if k != "preset"}}
    return merged
