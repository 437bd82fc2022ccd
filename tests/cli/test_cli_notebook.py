"""``wasdi notebook open``: a real JupyterLab started through the server, its address printed, the browser
opened only on a desktop; a wrong workspace and a server without the extra are sentences."""

from __future__ import annotations

import sys

import httpx
import pytest

from tests.cli.conftest import ALICE, Cli
from tests.server.notebook_support import lab_parts, require_notebooks
from wasdi_cli.commands import notebook


def test_open_prints_the_address_and_opens_a_browser_on_a_desktop(cli: Cli,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    require_notebooks()
    cli.login()
    assert cli("ws", "create", "notes").exit_code == 0
    opened: list[str] = []
    monkeypatch.setattr(notebook.webbrowser, "open", opened.append)
    result = cli("notebook", "open", "--ws", "notes", env={"DISPLAY": ":0"})
    assert result.exit_code == 0, result.output
    address = result.stdout.strip().splitlines()[-1]
    base, token = lab_parts(address)
    # The address is under the server's own (the in-process server's here), which carries it to the lab.
    assert address.startswith("http://testserver/notebook/")
    with httpx.Client(transport=httpx.WSGITransport(app=cli.app), timeout=10) as through_the_server:
        assert through_the_server.get(f"{base}/api/status", headers={"Authorization": f"token {token}"}).status_code \
            == 200
    assert opened == [address]
    # Asked again without a display (an SSH login): the same lab, printed, no browser.
    again = cli("notebook", "open", "--ws", "notes", env={"DISPLAY": None, "WAYLAND_DISPLAY": None})
    assert again.exit_code == 0 and again.stdout.strip().splitlines()[-1] == address
    assert opened == [address]
    ws_id = next(w.workspace_id for w in cli.sdk(cli.token()).workspaces.list() if w.name == "notes")
    lab = cli.app.services.notebooks.find(ALICE, ws_id)
    assert lab is not None and lab.running
    # Stopped from the command line: the lab ends, its address answers no more, a second stop says so.
    stopped = cli("notebook", "stop", "--ws", "notes")
    assert stopped.exit_code == 0, stopped.output
    assert stopped.stderr == f"Stopped your notebook on workspace 'notes' ({ws_id})\n"
    assert lab.wait(0) and not lab.running
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{base}/api/status", timeout=5)
    assert not cli.sdk(cli.token()).console.ready(ws_id).bool_value
    again = cli("notebook", "stop", "--ws", "notes")
    assert again.exit_code == 0 and again.stderr == f"No notebook of yours runs on workspace 'notes' ({ws_id})\n"


def test_open_explains_what_is_wrong(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    cli.login()
    result = cli("notebook", "open", "--ws", "no-such-workspace")
    assert result.exit_code == 1 and "no-such-workspace" in result.output
    assert cli("ws", "create", "notes").exit_code == 0
    monkeypatch.setitem(sys.modules, "jupyterlab", None)
    result = cli("notebook", "open", "--ws", "notes")
    assert result.exit_code == 1 and "pip install 'wasdi-toolkit[notebook]'" in result.output, result.output
