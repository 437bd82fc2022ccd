"""Many workspaces at once with the async client: create them, upload a file into each, list, clean up.

    python examples/async_fan_out.py --base-url http://127.0.0.1:8080 --user admin@wasdi.local --count 8

The calls of each step run concurrently (``asyncio.gather``), at most ``--parallel`` at a time. The password
is read from WASDI_PASSWORD when set, else prompted.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from wasdi_sdk import AsyncWasdiClient


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8080")
    parser.add_argument("--user", required=True)
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--parallel", type=int, default=4)
    args = parser.parse_args()
    limit = asyncio.Semaphore(args.parallel)

    async def at_most(step: Awaitable[Any]) -> Any:
        async with limit:
            return await step

    async with AsyncWasdiClient(base_url=args.base_url) as client:
        await client.auth.login(args.user, os.environ.get("WASDI_PASSWORD") or getpass.getpass())
        started = time.monotonic()
        created = await asyncio.gather(*(at_most(client.workspaces.create(name=f"fan-out {i}"))
                                         for i in range(args.count)))
        workspaces = [c.string_value for c in created]
        with tempfile.TemporaryDirectory() as scratch:
            notes = Path(scratch) / "notes.txt"
            notes.write_text("uploaded by examples/async_fan_out.py\n")
            await asyncio.gather(*(at_most(client.products.upload_without_ingest(ws, notes)) for ws in workspaces))
        listed = await asyncio.gather(*(at_most(client.files.exists("notes.txt", ws)) for ws in workspaces))
        print(f"{len(workspaces)} workspaces, notes.txt in {sum(listed)} of them, "
              f"{time.monotonic() - started:.2f} s")
        await asyncio.gather(*(at_most(client.workspaces.delete(ws)) for ws in workspaces))
        print("deleted them all")


if __name__ == "__main__":
    asyncio.run(main())
