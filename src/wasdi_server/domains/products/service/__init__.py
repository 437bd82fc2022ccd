"""Products: the files of a workspace that the service knows, their bands, footprint, metadata and layers.

``ProductService`` is one class per concern, each in its own module (rules in each module's docstring):

- ``records``: the ``products`` and ``layers`` collections, lookups, views, access and name rules, updates;
- ``ingestion``: files (uploads, upload accounts, the workspace folder) made products (INGEST);
- ``metadata``: the metadata tree, generated once in the background (READMETADATA);
- ``deletion``: one product, several in the background (DELETE), a workspace's;
- ``copies``: a product copied between workspaces (SHARE);
- ``imports``: imports of remote and local files, with the quota and mission checks (DOWNLOAD);
- ``layers``: bands published as map layers (PUBLISHBAND);
- ``catalog_files``: the ``/catalog`` file calls.
"""

from __future__ import annotations

from .catalog_files import CatalogFiles, ZippedFiles, md5_of
from .copies import PRODUCT_ALREADY_PRESENT, WorkspaceCopies, copy_item, copy_items
from .deletion import ProductDeletion
from .imports import DONE, GIB, STORAGE_CAPS, ProductImports
from .ingestion import ProductIngestion
from .layers import ProductLayers
from .metadata import METADATA_PLACEHOLDER, ProductMetadata
from .records import CHUNK, ProductRecords, check_product_name, product_key


class ProductService(WorkspaceCopies, ProductDeletion, ProductMetadata, ProductImports, ProductLayers, CatalogFiles):
    """The ``products`` and ``layers`` collections, and the files they describe (every concern above)."""


__all__ = [
    "CHUNK",
    "DONE",
    "GIB",
    "METADATA_PLACEHOLDER",
    "PRODUCT_ALREADY_PRESENT",
    "STORAGE_CAPS",
    "CatalogFiles",
    "ProductDeletion",
    "ProductImports",
    "ProductIngestion",
    "ProductLayers",
    "ProductMetadata",
    "ProductRecords",
    "ProductService",
    "WorkspaceCopies",
    "ZippedFiles",
    "check_product_name",
    "copy_item",
    "copy_items",
    "md5_of",
    "product_key",
]
