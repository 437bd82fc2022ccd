"""The app engines on their own: the Python engine with uv and with its venv + pip fallback, the engine of
types this server cannot build, and which package specs may reach an installer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from tests.app_support import LIBRARY, wheelhouse

from wasdi_server.domains.apps.app_environments import parse_command
from wasdi_server.domains.apps.requirements import package_spec, read_requirements
from wasdi_server.launcher.engines import AppLayout, EngineError, engine_for
from wasdi_server.launcher.engines.python_env import NAME_LOOKUP_HINT, PythonEngine
from wasdi_server.settings import load_settings


def layout(tmp_path: Path, pip_txt: str = "") -> AppLayout:
    folder = tmp_path / "app"
    folder.mkdir()
    (folder / "myProcessor.py").write_text("def run():\n    pass\n")
    if pip_txt:
        (folder / "pip.txt").write_text(pip_txt)
    return AppLayout("app", "python312", folder, tmp_path / "env")


@pytest.mark.parametrize("use_uv", [True, False], ids=["uv", "venv-pip-fallback"])
def test_the_python_engine_builds_an_isolated_environment(tmp_path: Path, use_uv: bool) -> None:
    engine = PythonEngine(LIBRARY, find_links=(str(wheelhouse()),), offline=True, **({} if use_uv else {"uv": ""}))
    assert bool(engine.uv) is use_uv
    app = layout(tmp_path, "six==1.16.0\n")
    lines: list[str] = []
    engine.deploy(app, lines.append)
    names = {p["name"].lower() for p in engine.packages(app)}
    assert {"wasdi", "six", "requests"} <= names
    assert engine.manager(app)["name"] == ("uv" if use_uv else "pip")
    assert lines[-1] == "environment ready"
    if not use_uv:
        assert any("uv cannot run here" in line for line in lines)
    engine.update_environment(app, "removePackage", "six", lines.append)
    assert "six" not in {p["name"].lower() for p in engine.packages(app)}
    with pytest.raises(EngineError, match="official library cannot be removed"):
        engine.update_environment(app, "removePackage", "wasdi", lines.append)
    engine.delete(app)
    assert not app.home.exists()


def test_an_app_inside_a_project_folder_builds(tmp_path: Path) -> None:
    """`make run` keeps its data directory inside the clone, under the project's pyproject.toml, which the box
    hides from a build: uv, which looks for its settings in every folder above its own, must not need it."""
    project = tmp_path / "clone"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "not-the-app"\nversion = "1"\n')
    (project / "uv.toml").write_text("offline = false\n")
    engine = PythonEngine(LIBRARY, find_links=(str(wheelhouse()),), offline=True)
    assert engine.uv
    lines: list[str] = []
    engine.deploy(layout(project), lines.append)
    assert lines[-1] == "environment ready", lines


def test_a_build_that_cannot_look_up_the_index_says_why_and_what_to_do(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UV_INDEX_URL", "https://no-such-index.invalid/simple")  # never resolves, anywhere
    engine = PythonEngine(LIBRARY)
    assert engine.uv
    lines: list[str] = []
    with pytest.raises(EngineError, match="failed"):
        engine.deploy(layout(tmp_path), lines.append)
    assert lines[-1] == NAME_LOOKUP_HINT, lines[-5:]


def test_a_stop_ends_a_build_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A build asked to stop (its operation stopped, the server stopping) ends its installer, not after it."""
    monkeypatch.setenv("UV_INDEX_URL", "https://no-such-index.invalid/simple")  # uv would retry it for seconds
    engine = PythonEngine(LIBRARY)
    stop = threading.Event()
    lines: list[str] = []

    def log(line: str) -> None:
        lines.append(line)
        if line.startswith("installing"):
            stop.set()

    with pytest.raises(EngineError, match="was stopped"):
        engine.deploy(layout(tmp_path), log, stop=stop)
    assert NAME_LOOKUP_HINT not in lines  # ended, not failed on the name


def test_a_package_that_cannot_be_found_fails_the_build_with_the_installer_output(tmp_path: Path) -> None:
    engine = PythonEngine(LIBRARY, find_links=(str(wheelhouse()),), offline=True)
    lines: list[str] = []
    with pytest.raises(EngineError, match="failed"):
        engine.deploy(layout(tmp_path, "no-such-package-anywhere==9.9\n"), lines.append)
    assert any("no-such-package-anywhere" in line for line in lines)


def test_running_without_an_environment_is_refused(tmp_path: Path) -> None:
    engine = PythonEngine(LIBRARY, find_links=(str(wheelhouse()),), offline=True)
    with pytest.raises(EngineError, match="deploy it first"):
        engine.packages(layout(tmp_path))


@pytest.mark.parametrize("app_type", ["octave", "ubuntu_idl372", "conda", "jupyter-notebook", "personalized_docker"])
def test_types_without_an_engine_refuse_with_the_reason(tmp_path: Path, app_type: str) -> None:
    engine = engine_for(app_type, load_settings(data_dir=tmp_path, environ={}))
    with pytest.raises(EngineError, match="this server does not have"):
        engine.deploy(layout(tmp_path), lambda line: None)
    engine.delete(AppLayout("a", app_type, tmp_path, tmp_path / "e"))


@pytest.mark.parametrize("spec", ["six", "six==1.16.0", "numpy>=1.20,<3", "requests[socks]~=2.31", "zope.interface"])
def test_plain_package_specs_pass(spec: str) -> None:
    assert package_spec(spec) == spec


@pytest.mark.parametrize("spec", ["-e .", "--index-url=http://x", "../pkg", "/tmp/pkg.whl", "http://x/pkg.whl",
                                  "pkg @ https://x", "pkg; python_version<'3'", "git+https://x", "", "a b"])
def test_anything_else_is_refused(spec: str) -> None:
    assert package_spec(spec) is None


def test_pip_txt_lines_are_split_into_specs_and_refusals() -> None:
    specs, refused = read_requirements("# comment\nsix==1.16.0  # pinned\n\n-r other.txt\nnumpy\n")
    assert specs == ["six==1.16.0", "numpy"]
    assert refused == ["-r other.txt"]


def test_update_commands() -> None:
    assert parse_command("addPackage/six/1.16.0") == ("addPackage", "six==1.16.0")
    assert parse_command("upgradePackage/six") == ("upgradePackage", "six")
    assert parse_command("removePackage/six/") == ("removePackage", "six")
    assert parse_command("") is None


def test_installers_get_how_to_reach_the_index_and_nothing_else(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # A machine whose index sits behind its own certificate authority or a proxy must still build apps.
    monkeypatch.setenv("SSL_CERT_FILE", "/etc/ssl/certs/company.pem")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("UV_INDEX_URL", "https://mirror.internal/simple")
    monkeypatch.setenv("WASDI_SERVER_STRIPE_API_KEY", "sk_live_secret")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    env = PythonEngine(LIBRARY)._tool_env(layout(tmp_path))
    assert env["SSL_CERT_FILE"] == "/etc/ssl/certs/company.pem"
    assert env["HTTPS_PROXY"] == "http://proxy.internal:3128"
    assert env["UV_INDEX_URL"] == "https://mirror.internal/simple"
    assert "WASDI_SERVER_STRIPE_API_KEY" not in env and "AWS_SECRET_ACCESS_KEY" not in env
