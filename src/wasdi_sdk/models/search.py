"""Models of /search: data providers, parsed queries and search results."""

from __future__ import annotations

from ._base import WasdiModel


class DataProviderViewModel(WasdiModel):
    """A configured data provider."""

    code: str | None = None
    description: str | None = None
    link: str | None = None


class QueryViewModel(WasdiModel):
    """A search query string parsed into its filters."""

    offset: int | None = None
    limit: int | None = None
    north: float | None = None
    south: float | None = None
    east: float | None = None
    west: float | None = None
    start_from_date: str | None = None
    start_to_date: str | None = None
    end_from_date: str | None = None
    end_to_date: str | None = None
    platform_name: str | None = None
    product_type: str | None = None
    product_level: str | None = None
    relative_orbit: int | None = None
    absolute_orbit: int | None = None
    cloud_coverage_from: float | None = None
    cloud_coverage_to: float | None = None
    sensor_mode: str | None = None
    product_name: str | None = None
    timeliness: str | None = None
    polarisation: str | None = None
    platform_serial_identifier: str | None = None
    instrument: str | None = None
    filters: dict[str, str] | None = None


class QueryResultViewModel(WasdiModel):
    """One product found by a search."""

    preview: str | None = None
    title: str | None = None
    summary: str | None = None
    id: str | None = None
    link: str | None = None
    footprint: str | None = None
    """WKT."""
    provider: str | None = None
    properties: dict[str, str] | None = None
    volume_name: str | None = None
    volume_path: str | None = None
    platform: str | None = None
