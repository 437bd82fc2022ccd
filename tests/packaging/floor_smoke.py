"""Run inside an environment holding the oldest releases pyproject.toml allows (test_floor.py makes it): the
server serves, a user logs in, an upload goes through the spool of waitress's parser, a download, a style (SLD
read with defusedxml), a raster band is published and drawn, the SFTP service listens, and the CLI answers.
Prints ``floor ok`` at the end; any failure is a traceback and a non-zero exit."""

from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from wasdi_sdk import WasdiClient

USER, PASSWORD = "floor@example.org", "floor-password-1"
BIN = Path(sys.executable).parent
SLD = (b'<StyledLayerDescriptor xmlns="http://www.opengis.net/sld"><NamedLayer><UserStyle><FeatureTypeStyle><Rule>'
       b'<RasterSymbolizer><ColorMap><ColorMapEntry color="#ff0000" quantity="0"/>'
       b'<ColorMapEntry color="#0000ff" quantity="100"/></ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle>'
       b"</UserStyle></NamedLayer></StyledLayerDescriptor>")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def geotiff(path: Path) -> Path:
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    with rasterio.open(path, "w", driver="GTiff", width=20, height=20, count=1, dtype="float32", crs="EPSG:4326",
                       transform=from_origin(10, 41, 0.05, 0.05)) as dst:
        dst.write(np.arange(400, dtype="float32").reshape(20, 20) / 4, 1)
    return path


def main() -> int:
    import psycopg
    import psycopg_pool

    assert psycopg.__version__ and psycopg_pool.__version__  # the deployment engine's libraries import
    work = Path(tempfile.mkdtemp(prefix="wasdi-floor-"))
    data = work / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI")}
    subprocess.run([BIN / "wasdi-server", "user", "add", USER, "--password-stdin", "--data-dir", str(data)],
                   input=PASSWORD + "\n", text=True, check=True, env=env, timeout=120)
    port = free_port()
    log = open(work / "server.log", "wb")  # noqa: SIM115
    server = subprocess.Popen([BIN / "wasdi-server", "serve", "--data-dir", str(data), "--port", str(port),
                               "--sftp-port", str(free_port())], stdout=log, stderr=subprocess.STDOUT, env=env)
    base_url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base_url + "/wasdi/hello", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        else:
            raise SystemExit("the server did not start:\n" + (work / "server.log").read_text())
        content = os.urandom(3 * 1024 * 1024)  # above waitress's inbuf_overflow: through the upload spool
        with WasdiClient(base_url=base_url, max_retries=0, timeout=60) as client:
            client.auth.login(USER, PASSWORD)
            ws = client.workspaces.create(name="floor").string_value or ""
            client.products.upload_without_ingest(ws, io.BytesIO(content), name="blob.bin")
            client.files.download("blob.bin", ws, work / "back.bin")
            assert (work / "back.bin").read_bytes() == content
            assert not list((data / "files" / ".upload-spool").iterdir())
            style = work / "floor.sld"
            style.write_bytes(SLD)
            client.styles.upload(style, name="floor_style")
            product = client.upload_and_ingest(ws, geotiff(work / "scene.tif"), timeout=120)
            assert product.bands_groups is not None and product.bands_groups.bands
            band = product.bands_groups.bands[0].name or ""
            answer = client.file_buffer.publish_band("scene.tif", ws, band, style="floor_style")
            if answer.message_code == "WAITFORRABBIT":
                client.processes.wait(str(answer.payload), timeout=120)
                answer = client.file_buffer.publish_band("scene.tif", ws, band, style="floor_style")
            assert answer.message_code == "PUBLISHBAND", answer
        account = subprocess.run([BIN / "wasdi", "--version"], capture_output=True, text=True, check=True,
                                 env={**env, "WASDI_CONFIG_DIR": str(work / "cli")}, timeout=60)
        assert account.stdout.startswith("wasdi "), account.stdout
        listed = subprocess.run([BIN / "wasdi", "ws", "list", "--json", "--base-url", base_url], text=True,
                                capture_output=True, env={**env, "WASDI_CONFIG_DIR": str(work / "cli"),
                                                          "WASDI_USER": USER, "WASDI_PASSWORD": PASSWORD},
                                timeout=60)
        assert listed.returncode in (0, 4), listed.stderr  # answered in a sentence either way, no traceback
        assert "Traceback" not in listed.stderr
        log_text = (work / "server.log").read_text()
        assert "SFTP service on" in log_text and "Traceback" not in log_text, log_text[-2000:]
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    print("floor ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
