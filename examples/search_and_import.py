"""Search a mission's products and import the first one into a workspace, then look at it.

    python examples/search_and_import.py --base-url http://127.0.0.1:8080 --user admin@wasdi.local

The password is read from WASDI_PASSWORD when set, else prompted. Against the local server of ``make run``
this finds the generated Sentinel-2 sample scenes near Turin.
"""

from __future__ import annotations

import argparse
import getpass
import os

from wasdi_sdk import WasdiClient


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8080")
    parser.add_argument("--user", required=True)
    parser.add_argument("--platform", default="S2")
    parser.add_argument("--from", dest="date_from", default="2024-01-01")
    parser.add_argument("--to", dest="date_to", default="2024-01-31")
    parser.add_argument("--keep", action="store_true", help="keep the workspace (deleted by default)")
    args = parser.parse_args()
    with WasdiClient(base_url=args.base_url) as client:
        client.auth.login(args.user, os.environ.get("WASDI_PASSWORD") or getpass.getpass())
        # The area is north, west, south, east: a box around Turin.
        found = client.search.eo_images(args.platform, args.date_from, args.date_to, bbox=(46.0, 7.0, 45.0, 8.0),
                                        cloud_coverage=(0, 30))
        print(f"{len(found)} {args.platform} products from {args.date_from} to {args.date_to}")
        if not found:
            return
        first = found[0]
        print(f"importing {first.title} from {first.provider}")
        workspace = client.workspaces.create(name="Search and import").string_value or ""
        try:
            final = client.import_and_wait(workspace, first.link or "")
            print(f"import {final.status if final else 'not needed: already there'}")
            product = client.products.get(first.title or "", workspace)
            bands = ", ".join(band.name or "" for band in product.bands_groups.bands) if product.bands_groups else ""
            print(f"product {product.file_name}: bands {bands}; bbox {product.bbox}")
        finally:
            if not args.keep:
                client.workspaces.delete(workspace)


if __name__ == "__main__":
    main()
