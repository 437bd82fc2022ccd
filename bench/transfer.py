"""Upload and download throughput of a big file through the SDK, against a plain local copy in the same run.

Starts ``python -m wasdi_server serve`` on 127.0.0.1 (a free port, a fresh temporary data directory,
one user added with the management command), makes a zero-filled sparse file of ``--size`` bytes
(default 1 GiB) and, from this process:

1. baseline: copies the file locally twice, with ``shutil.copyfile`` (the kernel's sendfile) and with
   a Python loop of 1 MiB reads and writes;
2. uploads it with ``client.products.upload_without_ingest`` (a streamed multipart POST);
3. downloads it back with ``client.files.download`` (streamed to a temporary file, then renamed);

checks the sizes, and prints MB/s for each with the ratio against the Python copy loop, and the peak
resident memory (``VmHWM`` of ``/proc/<pid>/status``, reset with ``/proc/<pid>/clear_refs`` before each
transfer) of the server and of this client process, against the 150 MB target.

    python bench/transfer.py [--size 1G] [--timeout 900] [--check]

Bounded in time: every HTTP call has a timeout and a watchdog ends the run (and the server) after
``--timeout`` seconds.  Needs about three times ``--size`` of free disk in the temporary folder (the
server's copy, waitress's spool of the request body, the downloaded copy).  Figures, not a test: exits
0 unless ``--check`` is given and a memory target is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

USER = "bench@example.org"
PASSWORD = "bench-password-1"
TARGET_MB = 150
MB = 1_000_000


def parse_size(text: str) -> int:
    units = {"K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}
    text = text.strip().upper().removesuffix("IB").removesuffix("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env["TMPDIR"] = env.get("TMPDIR", tempfile.gettempdir())
    return env


def vm_hwm(pid: int | str = "self") -> int:
    """Peak resident set size in bytes (``VmHWM``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def reset_hwm(pid: int | str = "self") -> bool:
    """Reset the peak RSS to the current RSS (Linux >= 4.0); whether it worked."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def timed(label: str, action) -> float:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    print(f"  {label:<28} {seconds:8.2f} s", flush=True)
    return seconds


def copy_loop(source: Path, target: Path) -> None:
    with open(source, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", default="1G", help="file size: bytes, or with K/M/G (default 1G = 1 GiB)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before the run is abandoned")
    parser.add_argument("--threads", type=int, default=8, help="waitress threads of the server")
    parser.add_argument("--check", action="store_true", help="exit 1 when a memory target is missed")
    args = parser.parse_args()
    size = parse_size(args.size)

    work = Path(tempfile.mkdtemp(prefix="wasdi-bench-transfer-"))
    server: subprocess.Popen[bytes] | None = None
    done = threading.Event()

    def watchdog() -> None:
        if not done.wait(args.timeout):
            print(f"\nabandoned after {args.timeout:.0f} s", file=sys.stderr, flush=True)
            if server is not None and server.poll() is None:
                server.kill()
            shutil.rmtree(work, ignore_errors=True)
            os._exit(2)

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        data = work / "data"
        add = subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                              "--data-dir", str(data)], input=PASSWORD + "\n", text=True, env=child_env(),
                             capture_output=True, timeout=60, check=False)
        if add.returncode != 0:
            raise SystemExit(f"user add failed: {add.stderr}")
        port = free_port()
        log = open(work / "server.log", "wb")  # noqa: SIM115 - the child writes it
        server = subprocess.Popen([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data), "--host",
                                   "127.0.0.1", "--port", str(port), "--threads", str(args.threads)],
                                  env=child_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        base_url = f"http://127.0.0.1:{port}"

        import httpx

        from wasdi_sdk import WasdiClient

        deadline = time.monotonic() + 30
        while True:
            if server.poll() is not None:
                raise SystemExit("the server exited:\n" + (work / "server.log").read_text())
            try:
                if httpx.get(base_url + "/wasdi/hello", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("the server did not start")
            time.sleep(0.05)

        source = work / "big.bin"
        with open(source, "wb") as handle:
            handle.truncate(size)
        print(f"transfer of {size:,} bytes ({size / 1024**3:.2f} GiB), zero-filled sparse source; "
              f"Python {platform.python_version()}, {os.cpu_count()} CPUs", flush=True)

        print("baseline (local copies)", flush=True)
        sendfile_s = timed("shutil.copyfile", lambda: shutil.copyfile(source, work / "copy1.bin"))
        (work / "copy1.bin").unlink()
        loop_s = timed("Python 1 MiB read/write loop", lambda: copy_loop(source, work / "copy2.bin"))
        (work / "copy2.bin").unlink()

        with WasdiClient(base_url=base_url, max_retries=0, timeout=httpx.Timeout(args.timeout)) as client:
            client.auth.login(USER, PASSWORD)
            ws = client.workspaces.create(name="bench").string_value or ""
            print("through the server (SDK, streamed)", flush=True)
            reset_hwm(server.pid)
            reset_hwm()
            client_base = vm_hwm()
            up_s = timed("upload (multipart POST)", lambda: client.products.upload_without_ingest(ws, source))
            server_up, client_up = vm_hwm(server.pid), vm_hwm()
            stored = data / "files" / USER / ws / "big.bin"
            assert stored.stat().st_size == size, "the server's copy has the wrong size"
            reset_hwm(server.pid)
            reset_hwm()
            target = work / "back.bin"
            down_s = timed("download (streamed GET)",
                           lambda: client.files.download("big.bin", ws, target))
            server_down, client_down = vm_hwm(server.pid), vm_hwm()
            assert target.stat().st_size == size, "the downloaded copy has the wrong size"

        def row(label: str, seconds: float) -> None:
            print(f"  {label:<28} {size / MB / seconds:9.1f} MB/s   {loop_s / seconds:5.2f} x the copy loop")

        print("\nthroughput", flush=True)
        row("shutil.copyfile", sendfile_s)
        row("Python copy loop", loop_s)
        row("upload", up_s)
        row("download", down_s)
        print("\npeak resident memory (VmHWM, reset before each transfer)")
        results = []
        for label, value in (("server, upload", server_up), ("server, download", server_down),
                             ("client, upload", client_up), ("client, download", client_down)):
            ok = value < TARGET_MB * 1024**2
            results.append(ok)
            print(f"  {label:<28} {value / 1024**2:7.1f} MiB   target < {TARGET_MB} MiB: {'PASS' if ok else 'MISS'}")
        print(f"  (client before the transfers: {client_base / 1024**2:.1f} MiB, imports included)")
        return 1 if args.check and not all(results) else 0
    finally:
        done.set()
        if server is not None and server.poll() is None:
            server.terminate()
            try:
                server.wait(10)
            except subprocess.TimeoutExpired:
                server.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
