"""Deploy an app (optional), run it in a workspace, wait for its end and fetch its output files.

    python examples/run_app.py --base-url http://127.0.0.1:8080 --user admin@wasdi.local \\
        --deploy examples/hello_app --params '{"NAME": "Ada"}'

``--deploy DIR`` zips the folder (an app: ``myProcessor.py`` and friends) and deploys it under ``--app``
(default ``hello``) before running it. The password is read from WASDI_PASSWORD when set, else prompted.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import tempfile
import zipfile
from pathlib import Path

from wasdi_sdk import WasdiClient


def zipped(folder: Path, to: Path) -> Path:
    with zipfile.ZipFile(to, "w") as bundle:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                bundle.write(path, path.relative_to(folder).as_posix())
    return to


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8080")
    parser.add_argument("--user", required=True)
    parser.add_argument("--app", default="hello")
    parser.add_argument("--deploy", type=Path, help="an app folder to deploy first")
    parser.add_argument("--params", default="{}", help="the run's parameters, as JSON")
    parser.add_argument("--out", type=Path, default=Path(tempfile.gettempdir()), help="where outputs go")
    args = parser.parse_args()
    with WasdiClient(base_url=args.base_url, timeout=300) as client:
        client.auth.login(args.user, os.environ.get("WASDI_PASSWORD") or getpass.getpass())
        workspace = client.workspaces.create(name=f"Run {args.app}").string_value or ""
        try:
            if args.deploy:
                with tempfile.TemporaryDirectory() as scratch:
                    bundle = zipped(args.deploy, Path(scratch) / f"{args.app}.zip")
                    deploy = client.apps.upload(bundle, name=args.app, workspace=workspace, force=True)
                client.processes.wait(deploy.string_value or "", poll_interval=0.5, timeout=600)
                print(f"deployed {args.app}")
            before = set(client.products.list_names(workspace))
            done = client.apps.run_and_wait(name=args.app, workspace=workspace,
                                                  params=json.loads(args.params), timeout=600)
            payload = client.processes.get_payload(done.process_id)
            print(f"run {done.process_id} {done.status}; payload {payload}")
            for name in sorted(set(client.products.list_names(workspace)) - before):
                path = client.files.download(name, workspace, args.out)
                print(f"output {name} -> {path}: {path.read_text(errors='replace').strip()[:80]!r}")
        finally:
            client.workspaces.delete(workspace)


if __name__ == "__main__":
    main()
