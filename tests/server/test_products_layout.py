"""domains/products/service is split by concern: one module per concern, each under 400 lines, composed into the one
``ProductService`` the rest of the server calls."""

from __future__ import annotations

from pathlib import Path

import wasdi_server.domains.products.service as products

CONCERNS = {"records", "ingestion", "metadata", "deletion", "copies", "imports", "layers", "catalog_files"}


def test_one_module_per_concern_each_under_400_lines() -> None:
    folder = Path(products.__file__).parent
    modules = {p.stem: len(p.read_text(encoding="utf-8").splitlines()) for p in folder.glob("*.py")}
    assert set(modules) == CONCERNS | {"__init__"}
    assert all(lines < 400 for lines in modules.values()), modules


def test_the_service_is_every_concern_and_each_method_is_defined_once() -> None:
    defined: dict[str, str] = {}
    for cls in products.ProductService.__mro__[1:-1]:
        assert cls.__module__.rsplit(".", 1)[-1] in CONCERNS
        for name, value in vars(cls).items():
            if callable(value) or isinstance(value, staticmethod):
                assert name not in defined, \
                    f"{name} in {cls.__name__} and {defined.get(name)}"
                defined.setdefault(name, cls.__name__)
    for method in ("queue_import", "publish_band", "copy_to", "metadata", "delete_many", "ingest_file", "properties"):
        assert callable(getattr(products.ProductService, method))
