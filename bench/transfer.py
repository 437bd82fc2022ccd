"""Upload and download throughput of a big file through the SDK, against a plain local copy in the same run.

Starts ``python -m wasdi_server serve`` on 127.0.0.1 (a free port, a fresh temporary data directory,
one user added with the management command), makes a zero-filled sparse file of ``--size`` bytes
(default 1 GiB) and, from this process:

1. baseline: copies the file locally twice, on the same disk, with ``shutil.copyfile`` (the kernel's
   copy) and with a Python loop of 1 MiB reads and writes, each made durable with an ``fsync`` as the
   server makes an upload durable before it answers;
2. uploads it through both upload endpoints, as streamed multipart POSTs: ``/product/uploadfilebylib``
   (``client.products.upload_without_ingest``) and ``/product/uploadfile`` (``client.products.upload``;
   the INGEST it queues is waited for before the next step, outside the time measured);
3. downloads it back with ``client.files.download`` (streamed to a temporary file, then renamed);

checks the sizes, and prints MB/s for each with its ratio against the faster local copy (target: each
upload >= 0.5x; every step starts after an ``os.sync()``, so none pays for another's pending writes), and
the peak resident memory of the server over its whole life (``VmHWM`` of ``/proc/<pid>/status`` when the
transfers are done; target < 150 MiB) and of this client process per transfer (reset with
``/proc/<pid>/clear_refs`` before each).

``--compare-src DIR`` measures the uploads a second time, in the same run, with the server of another
source tree (``DIR/src``, e.g. an export of main), for a before-and-after figure on the same disk.

    python bench/transfer.py [--size 1G] [--timeout 900] [--parts http,sftp] [--rounds 3] [--compare-src DIR] [--check]

The SFTP part (``--parts sftp``; both parts run by default) moves the same file through the server's
built-in SFTP service with OpenSSH's ``sftp`` client, and the same client against OpenSSH's own ``sshd``
(started on a free loopback port with a throw-away host key and user key) as the baseline: upload and
download MB/s, and ours as a ratio of OpenSSH's (target: upload >= 0.3x).  Without ``sshd`` the baseline
is the Python copy loop.

Bounded in time: every HTTP call has a timeout and a watchdog ends the run (and the server) after
``--timeout`` seconds.  Needs about three times ``--size`` of free disk in the temporary folder.  Figures,
not a test: exits 0 unless ``--check`` is given and a target is missed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

USER = "bench@example.org"
PASSWORD = "bench-password-1"
TARGET_MB = 150
UPLOAD_TARGET = 0.5
MB = 1_000_000
RUNNING: list[subprocess.Popen[bytes]] = []
"""Every server started, so the watchdog can end them."""


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


def child_env(src: Path = SRC) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(src), env.get("PYTHONPATH", "")) if p)
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


def copy_loop(source: Path, target: Path) -> None:
    with open(source, "rb") as src, open(target, "wb") as dst:
        while chunk := src.read(1 << 20):
            dst.write(chunk)
        os.fsync(dst.fileno())


def durable_copyfile(source: Path, target: Path) -> None:
    shutil.copyfile(source, target)
    with open(target, "rb") as copy:
        os.fsync(copy.fileno())


def timed(label: str, action) -> float:  # type: ignore[no-untyped-def]
    """Seconds ``action`` takes, from a disk with no pending writes (so each figure pays for its own only)."""
    os.sync()
    started = time.perf_counter()
    action()
    seconds = time.perf_counter() - started
    print(f"  {label:<28} {seconds:8.2f} s", flush=True)
    return seconds


def start_server(data: Path, log_path: Path, *options: str, sftp_port: int = 0,
                 src: Path = SRC) -> tuple[subprocess.Popen[bytes], str]:
    """``wasdi-server serve`` (from the source tree ``src``) over a new data directory holding ``USER``,
    answering on a free port; the process and its base URL (its SFTP service on ``sftp_port``, 0: any free port)."""
    import httpx

    add = subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                          "--data-dir", str(data)], input=PASSWORD + "\n", text=True, env=child_env(src),
                         capture_output=True, timeout=60, check=False)
    if add.returncode != 0:
        raise SystemExit(f"user add failed: {add.stderr}")
    port = free_port()
    with open(log_path, "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data), "--host",
                                   "127.0.0.1", "--port", str(port), "--sftp-port", str(sftp_port), *options],
                                  env=child_env(src), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    RUNNING.append(server)
    base_url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        if server.poll() is not None:
            raise SystemExit("the server exited:\n" + log_path.read_text())
        try:
            if httpx.get(base_url + "/wasdi/hello", timeout=2).status_code == 200:
                return server, base_url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.kill()
            raise SystemExit("the server did not start")
        time.sleep(0.05)


def stop(process: subprocess.Popen[bytes] | None) -> None:
    """Terminate a child (killed if it has not ended 10 s later)."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(10)
    except subprocess.TimeoutExpired:
        process.kill()


def wait_for_product(client: Any, ws: str, name: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not any(p.file_name == name for p in client.products.list(ws)):
        if time.monotonic() > deadline:
            raise SystemExit(f"the INGEST of {name} did not end in {timeout:.0f} s")
        time.sleep(0.2)


def http_uploads(size: int, source: Path, work: Path, args: argparse.Namespace, src: Path,
                 download: bool) -> dict[str, float]:
    """Seconds of each upload (and the download) through a server of the source tree ``src``, and its whole-life
    peak RSS (``server peak``, bytes)."""
    import httpx

    from wasdi_sdk import WasdiClient

    data = work / f"data-{len(list(work.glob('data-*')))}"
    server, base_url = start_server(data, work / f"{data.name}.log", "--threads", str(args.threads), src=src)
    figures: dict[str, float] = {}
    try:
        with WasdiClient(base_url=base_url, max_retries=0, timeout=httpx.Timeout(args.timeout)) as client:
            client.auth.login(USER, PASSWORD)
            ws = client.workspaces.create(name="bench").string_value or ""
            stored = data / "files" / USER / ws
            reset_hwm()
            figures["/product/uploadfilebylib"] = timed(
                "/product/uploadfilebylib", lambda: client.products.upload_without_ingest(ws, source, name="lib.bin"))
            figures["client, upload"] = vm_hwm()
            assert (stored / "lib.bin").stat().st_size == size, "the server's copy has the wrong size"
            figures["/product/uploadfile"] = timed(
                "/product/uploadfile", lambda: client.products.upload(ws, source, name="ingest.bin"))
            assert (stored / "ingest.bin").stat().st_size == size, "the server's copy has the wrong size"
            wait_for_product(client, ws, "ingest.bin", args.timeout)
            (stored / "ingest.bin").unlink()  # room on the disk for the download
            if download:
                reset_hwm()
                target = work / "back.bin"
                figures["download"] = timed("download (streamed GET)",
                                            lambda: client.files.download("lib.bin", ws, target))
                figures["client, download"] = vm_hwm()
                assert target.stat().st_size == size, "the downloaded copy has the wrong size"
                target.unlink()
        figures["server peak"] = vm_hwm(server.pid)
        return figures
    finally:
        stop(server)
        shutil.rmtree(data, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", default="1G", help="file size: bytes, or with K/M/G (default 1G = 1 GiB)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before the run is abandoned")
    parser.add_argument("--threads", type=int, default=8, help="waitress threads of the server")
    parser.add_argument("--check", action="store_true", help="exit 1 when a target is missed")
    parser.add_argument("--parts", default="http,sftp",
                        help="what to measure: http (the SDK's uploads and download), sftp (the SFTP service)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="rounds of every measurement, interleaved; the figures are medians (a busy disk varies)")
    parser.add_argument("--compare-src", type=Path, default=None,
                        help="another source tree (its src/ holds wasdi_server) whose uploads are measured too")
    args = parser.parse_args()
    size = parse_size(args.size)
    parts = {part.strip() for part in args.parts.split(",") if part.strip()}
    if "http" not in parts:
        return sftp_part(size, args.timeout)

    work = Path(tempfile.mkdtemp(prefix="wasdi-bench-transfer-"))
    done = threading.Event()

    def watchdog() -> None:
        if not done.wait(args.timeout):
            print(f"\nabandoned after {args.timeout:.0f} s", file=sys.stderr, flush=True)
            for process in RUNNING:
                if process.poll() is None:
                    process.kill()
            shutil.rmtree(work, ignore_errors=True)
            os._exit(2)

    threading.Thread(target=watchdog, daemon=True).start()
    try:
        source = work / "big.bin"
        with open(source, "wb") as handle:
            handle.truncate(size)
        print(f"transfer of {size:,} bytes ({size / 1024**3:.2f} GiB), zero-filled sparse source; "
              f"Python {platform.python_version()}, {os.cpu_count()} CPUs", flush=True)

        rounds: list[dict[str, float]] = []
        for number in range(1, args.rounds + 1):
            print(f"round {number} of {args.rounds}: local copies on the same disk", flush=True)
            figures = {"shutil.copyfile + fsync": timed("shutil.copyfile + fsync",
                                                        lambda: durable_copyfile(source, work / "copy1.bin"))}
            (work / "copy1.bin").unlink()
            figures["Python 1 MiB loop + fsync"] = timed("Python 1 MiB loop + fsync",
                                                         lambda: copy_loop(source, work / "copy2.bin"))
            (work / "copy2.bin").unlink()
            print("through the server (SDK, streamed)", flush=True)
            figures.update(http_uploads(size, source, work, args, SRC, download=number == 1))
            if args.compare_src is not None:
                print(f"through the server of {args.compare_src}", flush=True)
                other = http_uploads(size, source, work, args, args.compare_src.resolve() / "src", download=False)
                figures.update({f"{label} ({args.compare_src.name})": value for label, value in other.items()})
            rounds.append(figures)

        def row(label: str) -> float:
            """The median over rounds of MB/s and of the ratio to that round's faster local copy."""
            ratios = [min(r["shutil.copyfile + fsync"], r["Python 1 MiB loop + fsync"]) / r[label]
                      for r in rounds if label in r]
            speeds = [size / MB / r[label] for r in rounds if label in r]
            ratio = statistics.median(ratios)
            each = ", ".join(f"{x:.2f}" for x in ratios)
            print(f"  {label:<40} {statistics.median(speeds):8.1f} MB/s   {ratio:5.2f} x the faster local copy"
                  f"   (rounds: {each})")
            return ratio

        print(f"\nthroughput (medians of {len(rounds)} round(s))", flush=True)
        row("shutil.copyfile + fsync")
        row("Python 1 MiB loop + fsync")
        results = []
        for label in ("/product/uploadfilebylib", "/product/uploadfile"):
            ok = row(label) >= UPLOAD_TARGET
            results.append(ok)
            print(f"  {'':<40} target >= {UPLOAD_TARGET} x: {'PASS' if ok else 'MISS'}")
        row("download")
        if args.compare_src is not None:
            for label in ("/product/uploadfilebylib", "/product/uploadfile"):
                row(f"{label} ({args.compare_src.name})")
        print("\npeak resident memory (VmHWM; the highest over rounds)")
        peaks = [("server, whole life", max(r["server peak"] for r in rounds))]
        if args.compare_src is not None:
            peaks.append((f"server of {args.compare_src.name}, whole life",
                          max(r[f"server peak ({args.compare_src.name})"] for r in rounds)))
        for label, value in peaks:
            ok = value < TARGET_MB * 1024**2
            results.append(ok or label != "server, whole life")
            print(f"  {label:<40} {value / 1024**2:7.1f} MiB   target < {TARGET_MB} MiB: {'PASS' if ok else 'MISS'}")
        for label in ("client, upload", "client, download"):
            print(f"  {label:<40} {rounds[0][label] / 1024**2:7.1f} MiB   (reset before the transfer)")
        if "sftp" in parts:
            sftp_part(size, args.timeout)
        return 1 if args.check and not all(results) else 0
    finally:
        done.set()
        shutil.rmtree(work, ignore_errors=True)


# -- the SFTP part ---------------------------------------------------------------------------------------
SSHD_CONFIG = """Port {port}
ListenAddress 127.0.0.1
HostKey {work}/sshd_host_key
PidFile {work}/sshd.pid
AuthorizedKeysFile {work}/client_key.pub
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
"""


def openssh_sftp(port: int, target: str, commands: str, *, key: Path | None = None, askpass: Path | None = None,
                 timeout: float) -> float:
    """Seconds OpenSSH's ``sftp`` takes to run ``commands`` against ``target`` on 127.0.0.1:``port``."""
    sftp = shutil.which("sftp")
    if sftp is None:
        raise SystemExit("OpenSSH's sftp client is needed for the SFTP part (apt-get install openssh-client)")
    options = ["-P", str(port), "-oStrictHostKeyChecking=no", "-oUserKnownHostsFile=/dev/null", "-oLogLevel=ERROR"]
    env = dict(os.environ)
    if key is not None:
        options += ["-i", str(key), "-oIdentitiesOnly=yes", "-oPreferredAuthentications=publickey"]
    if askpass is not None:
        options += ["-oBatchMode=no", "-oPreferredAuthentications=password"]
        env.update(SSH_ASKPASS=str(askpass), SSH_ASKPASS_REQUIRE="force", DISPLAY=":0")
    started = time.perf_counter()
    # -b last: it implies BatchMode=yes unless an earlier -o said otherwise (ssh keeps the first value)
    done = subprocess.run([sftp, *options, "-b", "-", target], input=commands, text=True, capture_output=True, env=env,
                          timeout=timeout, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"sftp failed ({done.returncode}): {done.stderr or done.stdout}")
    return seconds


def start_sshd(work: Path) -> tuple[subprocess.Popen[bytes], int, Path] | None:
    """OpenSSH's sshd on a free loopback port, accepting a new key of this user; ``None`` when not installed."""
    sshd = shutil.which("sshd") or ("/usr/sbin/sshd" if Path("/usr/sbin/sshd").exists() else None)
    keygen = shutil.which("ssh-keygen")
    if sshd is None or keygen is None:
        return None
    for name in ("sshd_host_key", "client_key"):
        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(work / name)], check=True)
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation folder
    port = free_port()
    (work / "sshd_config").write_text(SSHD_CONFIG.format(port=port, work=work))
    process = subprocess.Popen([sshd, "-D", "-e", "-f", str(work / "sshd_config")], stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=open(work / "sshd.log", "wb"))  # noqa: SIM115
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("sshd did not start: " + (work / "sshd.log").read_text())
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return process, port, work / "client_key"
        time.sleep(0.05)
    process.kill()
    raise SystemExit("sshd did not listen in time")


def sftp_part(size: int, timeout: float) -> int:
    """Upload and download ``size`` bytes through the server's SFTP service and through OpenSSH's sshd."""
    import getpass
    import mailbox
    import re

    import httpx

    from wasdi_sdk import WasdiClient

    work = Path(tempfile.mkdtemp(prefix="wasdi-bench-sftp-"))
    server: subprocess.Popen[bytes] | None = None
    sshd: subprocess.Popen[bytes] | None = None
    try:
        data = work / "data"
        sftp_port = free_port()
        server, base_url = start_server(data, work / "server.log", sftp_port=sftp_port)
        with WasdiClient(base_url=base_url, max_retries=0, timeout=httpx.Timeout(60)) as client:
            client.auth.login(USER, PASSWORD)
            client.auth.create_upload_account(email=USER)
        outbox = mailbox.Maildir(data / "mail" / "outbox", create=False)
        mails = "".join(m.get_payload(decode=True).decode("utf-8", "replace") for m in outbox)
        password = re.findall(r"PASSWORD: (\S+)", mails)[-1]
        askpass = work / "askpass.sh"
        askpass.write_text(f"#!/bin/sh\nprintf '%s\\n' '{password}'\n")
        askpass.chmod(0o700)

        source = work / "big.bin"
        with open(source, "wb") as handle:
            handle.truncate(size)
        print(f"\nSFTP: {size:,} bytes with OpenSSH's sftp client "
              f"({subprocess.run(['ssh', '-V'], capture_output=True, text=True).stderr.strip()})", flush=True)
        ours_up = openssh_sftp(sftp_port, f"{USER}@127.0.0.1", f"put {source} big.bin\n", askpass=askpass,
                               timeout=timeout)
        ours_down = openssh_sftp(sftp_port, f"{USER}@127.0.0.1", f"get big.bin {work / 'ours-back.bin'}\n",
                                 askpass=askpass, timeout=timeout)
        assert (data / "uploads" / USER / "big.bin").stat().st_size == size
        assert (work / "ours-back.bin").stat().st_size == size
        (work / "ours-back.bin").unlink()

        started = start_sshd(work)
        rows: list[tuple[str, float]] = [("wasdi-server SFTP, upload", ours_up),
                                         ("wasdi-server SFTP, download", ours_down)]
        if started is not None:
            sshd, sshd_port, key = started
            target = f"{getpass.getuser()}@127.0.0.1"
            base_up = openssh_sftp(sshd_port, target, f"put {source} {work / 'sshd-copy.bin'}\n", key=key,
                                   timeout=timeout)
            base_down = openssh_sftp(sshd_port, target, f"get {work / 'sshd-copy.bin'} {work / 'sshd-back.bin'}\n",
                                     key=key, timeout=timeout)
            baseline = "OpenSSH sshd"
            rows += [("OpenSSH sshd, upload", base_up), ("OpenSSH sshd, download", base_down)]
        else:
            print("  (sshd is not installed: the baseline is the Python copy loop; apt-get install openssh-server)")
            base_up = base_down = timed("Python 1 MiB read/write loop", lambda: copy_loop(source, work / "c.bin"))
            baseline = "the copy loop"
        print("\nthroughput")
        for label, seconds in rows:
            print(f"  {label:<30} {size / MB / seconds:9.1f} MB/s   {seconds:7.2f} s")
        up_ratio, down_ratio = base_up / ours_up, base_down / ours_down
        print(f"  upload   ÷ {baseline}: {up_ratio:5.2f} x   target >= 0.3 x: {'PASS' if up_ratio >= 0.3 else 'MISS'}")
        print(f"  download ÷ {baseline}: {down_ratio:5.2f} x")
        return 0
    finally:
        for process in (server, sshd):
            stop(process)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
