"""A real PostgreSQL for the tests: one database of its own per test session (per xdist worker), dropped at
the end, on the server of ``WASDI_TEST_POSTGRES_URL`` (default: this machine's, 127.0.0.1:5432, user
postgres).  Other engineers use the same server, so every name is unique to the run.

Where no server answers, the tests that need one skip with the reason, except under ``CI=true``, where
they fail: CI machines run PostgreSQL.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

from tests import environment

ADMIN_URL = os.environ.get("WASDI_TEST_POSTGRES_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, ""))


def unavailable(reason: str) -> None:
    environment.unavailable(f"no PostgreSQL for the tests: {reason}")


def admin_connection(url: str = ADMIN_URL) -> Any:
    try:
        import psycopg
    except ImportError:
        unavailable("psycopg is not installed (pip install 'wasdi-toolkit[postgresql]')")
    return psycopg.connect(url, autocommit=True, connect_timeout=5)


@pytest.fixture(scope="session")
def pg_database() -> Iterator[str]:
    """The URL of a new, empty database for this test session (dropped at the end)."""
    name = f"wasdi_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    try:
        with admin_connection() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as e:  # no server, no rights, no driver
        unavailable(str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
    try:
        yield with_database(ADMIN_URL, name)
    finally:
        with admin_connection() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def empty_schema(url: str) -> None:
    with admin_connection(url) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


@pytest.fixture
def pg_url(pg_database: str) -> str:
    """The session's database, emptied for this test."""
    empty_schema(pg_database)
    return pg_database


def postgres_binaries() -> Path | None:
    """The folder of the installed PostgreSQL server programs (``initdb``, ``pg_ctl``), newest first."""
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "initdb").is_file() and (candidate / "pg_ctl").is_file():
            return candidate
    found = shutil.which("initdb")
    return Path(found).parent if found else None


class OwnPostgres:
    """A PostgreSQL server of a test's own (started from the installed binaries), to restart at will.

    Its folder is a new one under the system's temporary folder (PostgreSQL refuses to run as root, and the
    ``postgres`` user it then runs as cannot enter pytest's private temporary folders); ``remove`` deletes it."""

    def __init__(self, port: int) -> None:
        import tempfile

        self.folder = Path(tempfile.mkdtemp(prefix="wasdi-test-pg-"))
        self.folder.chmod(0o755)
        self.port = port
        self.data = self.folder / "pgdata"
        self.log = self.folder / "postgres.log"
        binaries = postgres_binaries()
        if binaries is None:
            unavailable("no PostgreSQL server programs (initdb, pg_ctl) are installed")
        assert binaries is not None
        self.bin = binaries

    def _run(self, *args: str) -> None:
        command = [str(self.bin / args[0]), *args[1:]]
        kwargs: dict = {"capture_output": True, "text": True, "timeout": 120, "check": False}
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            kwargs["user"] = "postgres"
        done = subprocess.run(command, **kwargs)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed: {done.stderr[-500:]}{done.stdout[-300:]}")

    def init(self) -> None:
        if os.geteuid() == 0:
            shutil.chown(self.folder, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")

    def start(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60", "-o",
                  f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.folder} -c fsync=on", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def remove(self) -> None:
        with contextlib.suppress(RuntimeError):  # not running
            self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
