"""Import a scene, publish one of its bands as a map layer, and print the WMS address to give QGIS.

    python examples/publish_band.py --base-url http://127.0.0.1:8080 --user admin@wasdi.local --png band.png

The password is read from WASDI_PASSWORD when set, else prompted. ``--png`` also saves a preview of the layer.
"""

from __future__ import annotations

import argparse
import getpass
import os
from pathlib import Path

from wasdi_sdk import WasdiClient


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8080")
    parser.add_argument("--user", required=True)
    parser.add_argument("--png", type=Path, help="save a preview of the layer here")
    parser.add_argument("--keep", action="store_true", help="keep the workspace (deleted by default)")
    args = parser.parse_args()
    with WasdiClient(base_url=args.base_url) as client:
        client.auth.login(args.user, os.environ.get("WASDI_PASSWORD") or getpass.getpass())
        scene = client.search.eo_images("S2", "2024-01-18", "2024-01-18")[0]
        workspace = client.workspaces.create(name="Publish a band").string_value or ""
        try:
            client.import_and_wait(workspace, scene.link or "")
            product = client.products.get(scene.title or "", workspace)
            band = product.bands_groups.bands[0].name or "" if product.bands_groups else ""
            answer = client.file_buffer.publish_band(product.file_name or "", workspace, band)
            if answer.message_code == "WAITFORRABBIT":  # being drawn: the payload is the PUBLISHBAND process
                client.processes.wait(str(answer.payload), poll_interval=0.5, timeout=300)
                answer = client.file_buffer.publish_band(product.file_name or "", workspace, band)
            layer = answer.payload["layerId"] if isinstance(answer.payload, dict) else ""
            print(f"layer {layer}: band {band} of {product.file_name}")
            print(f"WMS address for QGIS: {client.maps.wms_url(layer)}")
            print(f"extent (lon/lat): {client.maps.bounds(layer)}")
            if args.png:
                args.png.write_bytes(client.maps.preview(layer, size=512))
                print(f"preview saved to {args.png}")
        finally:
            if not args.keep:
                client.workspaces.delete(workspace)


if __name__ == "__main__":
    main()
