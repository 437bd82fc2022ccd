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

    python bench/transfer.py [--size 1G] [--timeout 900] [--parts http,sftp] [--check]

The SFTP part (``--parts sftp``; both parts run by default) moves the same file through the server's
built-in SFTP service with OpenSSH's ``sftp`` client, and the same client against OpenSSH's own ``sshd``
(started on a free loopback port with a throw-away host key and user key) as the baseline: upload and
download MB/s, and ours as a ratio of OpenSSH's (target: upload >= 0.3x).  Without ``sshd`` the baseline
is the Python copy loop.

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


def start_server(data: Path, log_path: Path, *options: str, sftp_port: int = 0) -> tuple[subprocess.Popen[bytes], str]:
    """``wasdi-server serve`` over a new data directory holding ``USER``, answering on a free port; the process
    and its base URL (its SFTP service on ``sftp_port``, 0: any free port)."""
    import httpx

    add = subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                          "--data-dir", str(data)], input=PASSWORD + "\n", text=True, env=child_env(),
                         capture_output=True, timeout=60, check=False)
    if add.returncode != 0:
        raise SystemExit(f"user add failed: {add.stderr}")
    port = free_port()
    with open(log_path, "wb") as log:
        server = subprocess.Popen([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data), "--host",
                                   "127.0.0.1", "--port", str(port), "--sftp-port", str(sftp_port), *options],
                                  env=child_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", default="1G", help="file size: bytes, or with K/M/G (default 1G = 1 GiB)")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before the run is abandoned")
    parser.add_argument("--threads", type=int, default=8, help="waitress threads of the server")
    parser.add_argument("--check", action="store_true", help="exit 1 when a memory target is missed")
    parser.add_argument("--parts", default="http,sftp",
                        help="what to measure: http (the SDK's upload and download), sftp (the SFTP service)")
    args = parser.parse_args()
    size = parse_size(args.size)
    parts = {part.strip() for part in args.parts.split(",") if part.strip()}
    if "http" not in parts:
        return sftp_part(size, args.timeout)

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
        server, base_url = start_server(data, work / "server.log", "--threads", str(args.threads))

        import httpx

        from wasdi_sdk import WasdiClient

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
        if "sftp" in parts:
            sftp_part(size, args.timeout)
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
            if process is not None and process.poll() is None:
                process.terminate()
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
