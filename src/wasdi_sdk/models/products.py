"""Models of /product: products, their bands and their metadata."""

from __future__ import annotations

from ._base import WasdiModel


class AttributeViewModel(WasdiModel):
    """One attribute of a metadata element."""

    description: str | None = None
    data: str | None = None
    data_type: int | None = None
    num_elems: int | None = None


class MetadataViewModel(WasdiModel):
    """A metadata element: a name, attributes and child elements."""

    name: str | None = None
    elements: list[MetadataViewModel] | None = None
    attributes: list[AttributeViewModel] | None = None


class BandViewModel(WasdiModel):
    """One band of a product, and where it is published."""

    name: str | None = None
    published: bool | None = None
    width: int | None = None
    height: int | None = None
    layer_id: str | None = None
    geoserver_bounding_box: str | None = None
    geoserver_url: str | None = None


class NodeGroupViewModel(WasdiModel):
    """The group of bands of a product."""

    node_name: str | None = None
    bands: list[BandViewModel] | None = None


class ProductViewModel(WasdiModel):
    """A product (file) in a workspace."""

    name: str | None = None
    file_name: str | None = None
    product_friendly_name: str | None = None
    metadata: MetadataViewModel | None = None
    bands_groups: NodeGroupViewModel | None = None
    metadata_file_reference: str | None = None
    metadata_file_created: bool | None = None
    style: str | None = None
    description: str | None = None


class GeorefProductViewModel(ProductViewModel):
    """A product with its bounding box, as the service answers it (``file_name`` always there: a product is its
    file; ``ProductViewModel``, also the body of an update, leaves every member optional)."""

    file_name: str
    bbox: str | None = None
    """Ten comma separated numbers: the lat,lon corners of the footprint, closed."""
