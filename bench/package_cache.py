"""What a package cache no two apps share costs a deploy: the Python engine, boxed, building real environments
(the official library and a ``pip.txt``), in one run, three layouts of the installer's cache:

- ``shared``: the layout before issue 27, one cache every build writes and every environment hard-links into
  (a build could change the files every app imports); the baseline;
- ``private``: each app's own cache (what the server does): only the app's builds write it, only its
  environment links to it;
- ``seeded``: a cache only the server writes (filled here by a build of its own), read-only to builds: copied
  into a new app's own cache before its first build (uv cannot install from a read-only cache: it takes a lock
  and writes temporary files in it, and this bubblewrap, 0.8, has no overlay to give a build a throw-away layer
  over it).

For each: a second deploy of an app whose ``pip.txt`` is unchanged, and the deploy of a new app whose packages
are already in the cache (for ``private``: in the caches of other apps, which a new app cannot use).  Medians
of ``--rounds``; ratios against ``shared`` measured in the same run.

By default the builds reach the package index through the box's proxy door (``launcher/box/proxy.py``), as
deploys with ``apps_offline`` off do; ``--offline DIR`` builds from a folder of wheels instead.

    PYTHONPATH=src python bench/package_cache.py [--rounds 3] [--packages "six==1.16.0 iniconfig==2.0.0"]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from wasdi_server.launcher.box import Box, Job
from wasdi_server.launcher.box.proxy import OutboundProxy
from wasdi_server.launcher.engines import AppLayout, LogLine
from wasdi_server.launcher.engines.python_env import PythonEngine
from wasdi_server.settings import load_settings

LIBRARY = "wasdi==0.8.7.8"


class SharedCache(PythonEngine):
    """The layout before issue 27: one cache for every app, written by every build."""

    shared: Path = Path()

    def cache(self, app: AppLayout) -> Path:  # type: ignore[override]
        return self.shared

    def _build_job(self, app: AppLayout, command: list[str]) -> Job:
        job = super()._build_job(app, command)
        return Job(job.argv, job.env, job.cwd, job.read, [*job.write, self.shared], job.connect_ports)


class SeededCache(PythonEngine):
    """A cache only the server writes, copied into a new app's own cache before its first build."""

    seed: Path = Path()

    def deploy(self, app: AppLayout, log: LogLine) -> None:
        if not self.cache(app).exists():
            shutil.copytree(self.seed, self.cache(app), symlinks=True)
        super().deploy(app, log)


def app(root: Path, name: str, pip_txt: str) -> AppLayout:
    folder = root / "processors" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "myProcessor.py").write_text("def run():\n    pass\n")
    (folder / "pip.txt").write_text(pip_txt)
    return AppLayout(name, "python312", folder, root / "app-environments" / name)


def timed(engine: PythonEngine, layout: AppLayout) -> float:
    lines: list[str] = []
    started = time.perf_counter()
    engine.deploy(layout, lines.append)
    elapsed = time.perf_counter() - started
    if lines[-1:] != ["environment ready"]:
        sys.exit(f"the deploy of {layout.name} failed: {lines[-5:]}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--packages", default="six==1.16.0 iniconfig==2.0.0")
    parser.add_argument("--offline", type=Path, help="a folder of wheels to build from instead of the index")
    args = parser.parse_args()
    pip_txt = "\n".join(args.packages.split()) + "\n"
    with tempfile.TemporaryDirectory(prefix="wasdi-bench-cache-") as tmp:
        root = Path(tmp) / "data"
        root.mkdir()
        settings = load_settings(data_dir=root, environ={})
        box = Box.from_settings(settings, proxy=None if args.offline else OutboundProxy.from_settings(settings))
        if box.refusal():
            sys.exit(f"builds cannot be boxed here: {box.refusal()}")
        options = {"find_links": (str(args.offline),), "offline": True} if args.offline else {}
        shared = SharedCache(LIBRARY, box=box, **options)  # type: ignore[arg-type]
        shared.shared = root / "app-environments" / ".package-cache"
        private = PythonEngine(LIBRARY, box=box, **options)  # type: ignore[arg-type]
        seeded = SeededCache(LIBRARY, box=box, **options)  # type: ignore[arg-type]
        seeded.seed = root / "server-cache"
        # The server fills its cache with a build of its own (here: one of the same packages).
        timed(private, app(root, "seed-builder", pip_txt))
        shutil.copytree(private.cache(app(root, "seed-builder", pip_txt)), seeded.seed, symlinks=True)

        layouts = {"shared": shared, "private": private, "seeded": seeded}
        again: dict[str, list[float]] = {name: [] for name in layouts}
        new: dict[str, list[float]] = {name: [] for name in layouts}
        for name, engine in layouts.items():
            timed(engine, app(root, f"{name}-first", pip_txt))  # the cache warm (for private: that app's own)
        for round_ in range(args.rounds):
            # Interleaved, so each figure sits next to its baseline, and in a rotating order, so none is always first.
            names = list(layouts)
            for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                engine = layouts[name]
                again[name].append(timed(engine, app(root, f"{name}-first", pip_txt)))
                new[name].append(timed(engine, app(root, f"{name}-new-{round_}", pip_txt)))

    base_again, base_new = statistics.median(again["shared"]), statistics.median(new["shared"])
    source = f"wheels in {args.offline}" if args.offline else "the package index through the box's proxy"
    print(f"deploys of {LIBRARY} + {args.packages} from {source}, boxed; medians of {args.rounds} rounds")
    print(f"{'cache':<9} {'2nd deploy, same pip.txt':>26} {'new app, packages cached':>26}")
    for name in layouts:
        a, n = statistics.median(again[name]), statistics.median(new[name])
        print(f"{name:<9} {a:>9.2f} s ({a / base_again:4.2f}x shared) {n:>9.2f} s ({n / base_new:4.2f}x shared)")


if __name__ == "__main__":
    main()
