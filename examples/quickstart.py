"""Log in, create a workspace, share it and clean up, with the typed SDK.

    python examples/quickstart.py --base-url http://127.0.0.1:8080 --user admin@wasdi.local

The password is read from WASDI_PASSWORD when set, else prompted.
"""

from __future__ import annotations

import argparse
import getpass
import os

from wasdi_sdk import APIError, WasdiClient


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8080")
    parser.add_argument("--user", required=True)
    parser.add_argument("--share-with", help="a user to share the workspace with")
    args = parser.parse_args()
    with WasdiClient(base_url=args.base_url) as client:
        # As `wasdi login`: WASDI_PASSWORD for scripts and CI, else a prompt.
        me = client.auth.login(args.user, os.environ.get("WASDI_PASSWORD") or getpass.getpass())
        print(f"logged in as {me.user_id} ({me.type})")
        ws_id = client.workspaces.create(name="Quickstart").string_value or ""
        ws = client.workspaces.get(ws_id)
        print(f"created {ws.name} on node {ws.node_code}; data calls go to {ws.api_url}")
        if args.share_with:
            try:
                print(client.workspaces.share_add(workspace=ws_id, user_id=args.share_with).string_value)
            except APIError as e:
                print(f"could not share: {e.message}")
        for item in client.workspaces.list():
            print(f"  {item.workspace_id}  {item.name:30} {item.owner_user_id}")
        client.workspaces.delete(ws_id)
        client.auth.logout()


if __name__ == "__main__":
    main()
