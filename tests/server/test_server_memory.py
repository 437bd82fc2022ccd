"""What a server loads stays within its memory budget (bench/transfer.py measures the whole life): the PostgreSQL
driver only with a PostgreSQL store, the pieces a serve needs otherwise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import wasdi_server


def test_a_server_on_the_default_engine_never_loads_the_postgresql_driver(tmp_path: Path) -> None:
    code = ("import sys\nfrom wasdi_server import create_app, load_settings\n"
            f"app = create_app(load_settings(data_dir={str(tmp_path / 'data')!r}, environ={{}}))\n"
            "app.services.close()\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('psycopg', 'psycopg_pool')))")
    src = Path(wasdi_server.__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                          env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
