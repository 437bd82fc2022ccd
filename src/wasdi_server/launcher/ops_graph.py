"""The GRAPH operation: run a workflow's SNAP graph with ``gpt`` and add its outputs to the workspace.

The graph is read from the workflow's file when the operation starts, its ``templateParams``
replaced, and each Read / Write node's ``file`` set to the input / output file in the workspace
folder (``snap_graphs.render_run_graph``).  ``gpt`` is the ``snap_gpt`` setting, else ``gpt`` on
the PATH; without one the operation ends ERROR saying so.  It runs in the box (a graph names files:
it may read its own installation and Java, and write the workspace's folder, nothing else) with only
the environment it needs (PATH, JAVA_HOME, a private HOME), at most ``graph_timeout_seconds``; every
line it prints goes to the run log.  Each output file it wrote becomes a product of the
workspace (the INGEST path) and a GRAPH broker message; a missing output or a non-zero exit is an
ERROR.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from ..domains.workflows.snap_graphs import render_run_graph
from ..errors import DomainError
from ..messages import OK
from .box import Box, BoxUnavailable, Job
from .box.system import interpreter_paths
from .operations import OperationContext, OperationFailed, OperationTimedOut, operation
from .ops_products import reported

NO_GPT = ("SNAP's gpt was not found on this server (set snap_gpt to its path, or put gpt on the PATH): "
          "the workflow cannot run")


def find_gpt(configured: str) -> str | None:
    """The gpt executable: the configured path (or command name), else ``gpt`` on the PATH."""
    if configured:
        path = Path(configured).expanduser()
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        return shutil.which(configured)
    return shutil.which("gpt")


def gpt_environment(home: Path) -> dict[str, str]:
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8"}
    for name in ("JAVA_HOME", "SNAP_HOME"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return env


@operation("GRAPH")
@reported
def run_graph(ctx: OperationContext) -> bool:
    services = ctx.services
    p = ctx.parameter
    log = services.process_logs

    def say(line: str) -> None:
        log.write(ctx.process_id, line)

    workflow = services.workflows.get(str(p.get("workflowId") or ""))
    if workflow is None:
        raise OperationFailed("the workflow of this run no longer exists")
    gpt = find_gpt(services.settings.snap_gpt)
    if gpt is None:
        raise OperationFailed(NO_GPT)  # the launcher writes it to the run log, as every failure
    workspace = services.workspaces.load(ctx.workspace_id)
    products = services.products
    inputs = {}
    for node, name in zip(p.get("inputNodeNames") or [], p.get("inputFileNames") or [], strict=True):
        try:  # a regular file or a folder of the workspace, no link on the way (files_beneath), never a FIFO
            inputs[str(node)] = products.reader_path(workspace, str(name))
        except DomainError as e:
            raise OperationFailed(f"the input {name}: {e.message}") from e
    output_names = [str(n) for n in p.get("outputFileNames") or []]
    outputs = {str(node): products.file_path(workspace, name).resolve()
               for node, name in zip(p.get("outputNodeNames") or [], output_names, strict=True)}
    try:
        data = services.workflows.graph_path(workflow["workflowId"]).read_bytes()
    except FileNotFoundError as e:
        raise OperationFailed("the workflow's graph file is not on this node") from e
    graph = render_run_graph(data, dict(p.get("templateParams") or {}), inputs, outputs)
    folder = services.workspaces.folder(workspace)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".graph-", dir=folder) as work:
        graph_file = Path(work) / "graph.xml"
        graph_file.write_bytes(graph)
        say(f"running the workflow {workflow.get('name')} with {Path(gpt).name}")
        ctx.progress(5)
        timeout = services.settings.graph_timeout_seconds
        env = gpt_environment(Path(work))
        read = [*interpreter_paths(gpt), *(Path(env[v]) for v in ("JAVA_HOME", "SNAP_HOME") if env.get(v))]
        job = Job([gpt, str(graph_file)], env, Path(work), read=read, write=[folder])
        box = Box.from_settings(services.settings)
        say(box.summary(job))
        try:
            outcome = ctx.run(job, timeout=timeout, on_output=say)
        except BoxUnavailable as e:
            raise OperationFailed(str(e)) from e
        except OperationTimedOut:
            # A timeout ends STOPPED (gaps §5: stopped by the user or by a timeout); the log says which.
            say(f"stopped: gpt did not finish within {timeout:g} s")
            ctx.set_payload(f"gpt did not finish within {timeout:g} s and was stopped")
            raise
    services.workspaces.refresh_storage_size(workspace)
    for name in outcome.limits:
        say(box.limits.explain(name))
    code = 1 if outcome.limits and outcome.code == 0 else outcome.code
    if code != 0:
        raise OperationFailed(f"gpt ended with exit code {code}")
    missing = [name for name in output_names if not products.file_path(workspace, name).exists()]
    if missing:
        raise OperationFailed("gpt did not write " + ", ".join(missing))
    ctx.progress(90)
    size = 0
    for name in output_names:
        ctx.check_stopped()
        record = products.ingest_file(workspace, name)
        size += int(record.get("fileSize") or 0)
        services.messages.send("GRAPH", products.view(record), ctx.workspace_id, result=OK)
        say(f"added {name} to the workspace")
    services.processes.set_file_size(ctx.process_id, size)
    ctx.set_payload(", ".join(output_names))
    return True
