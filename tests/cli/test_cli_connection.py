"""How the command connects (issue 31, item 6): a connect deadline, the sentence for TLS spoken to a plain-HTTP
server, a base URL without a scheme, an unknown host name, and one sentence with exit 4 for an ended session."""

from __future__ import annotations

import time

import pytest

from tests.cli.conftest import REAL_MAKE_CLIENT, Cli, lines
from tests.socket_server import on_a_socket
from wasdi_cli import connection, transport


@pytest.fixture
def real_client(cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """The installed command's HTTP client (the CLI's transport) instead of the in-process one."""
    monkeypatch.setattr(connection, "make_client", REAL_MAKE_CLIENT)
    monkeypatch.setattr(transport, "CONNECT_DEADLINE", 1.0)
    return cli


def test_https_to_a_plain_http_server_says_so_within_the_deadline(real_client: Cli) -> None:
    with on_a_socket(real_client.app) as url:
        started = time.monotonic()
        result = real_client("ws", "list", "--base-url", url.replace("http://", "https://"),
                             env={"WASDI_SESSION_TOKEN": "any"})
        elapsed = time.monotonic() - started
    assert result.exit_code == 3, result.output
    assert lines(result.stderr) == [f"Error: {url.replace('http://', 'https://')} speaks plain HTTP, not TLS: "
                                    "write the base URL with http:// instead of https://"]
    # One deadline (1 s here), one probe and the retries' back-off: not the server's two-minute idle timeout.
    assert elapsed < 8, elapsed


def test_a_server_that_never_answers_ends_at_the_connect_deadline(real_client: Cli) -> None:
    import socket

    with socket.socket() as silent:  # accepts connections (the backlog) and never says a word
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        started = time.monotonic()
        result = real_client("ws", "list", "--base-url", f"https://127.0.0.1:{port}",
                             env={"WASDI_SESSION_TOKEN": "any"})
        elapsed = time.monotonic() - started
    assert result.exit_code == 3, result.output
    assert f"https://127.0.0.1:{port} did not answer within 1 s: check the address" in result.stderr
    assert elapsed < 8, elapsed


def test_the_installed_command_connects_with_a_ten_second_deadline() -> None:
    client = REAL_MAKE_CLIENT("http://127.0.0.1:8080", None)
    try:
        used = client._http._transport
        assert isinstance(used, transport.DeadlineTransport) and used.connect_deadline == 10.0
    finally:
        client.close()
    assert used._pool._connections == []  # closed with the client: nothing left open


def test_a_local_base_url_without_a_scheme_gets_http(cli: Cli) -> None:
    cli.login("alice@example.org", "password-a", "--base-url", "127.0.0.1:18481")
    assert cli.calls[-1] == ("http://127.0.0.1:18481", None)
    assert cli.profiles()["profiles"]["default"]["base_url"] == "http://127.0.0.1:18481"
    listed = cli("ws", "list", "--base-url", "localhost:18481/rest", env={"WASDI_SESSION_TOKEN": cli.token()})
    assert listed.exit_code == 0, listed.output
    assert cli.calls[-1][0] == "http://localhost:18481/rest"


@pytest.mark.parametrize("given", ["wasdi.example.org/rest", "ftp://wasdi.example.org", "https://"])
def test_another_base_url_without_http_is_a_usage_error(cli: Cli, given: str) -> None:
    result = cli("ws", "list", "--base-url", given, env={"WASDI_SESSION_TOKEN": "any"})
    assert result.exit_code == 2
    assert lines(result.stderr)[0].startswith(f"Error: the base URL '{given}' ")
    assert "cannot reach" not in result.stderr and cli.calls == []
    if "://" not in given:
        assert f"write https://{given} (or http://{given} for a server without TLS)" in result.stderr


def test_an_unknown_host_name_says_so(real_client: Cli) -> None:
    result = real_client("ws", "list", "--base-url", "http://no-such-host.invalid",
                         env={"WASDI_SESSION_TOKEN": "any"})
    assert result.exit_code == 3
    assert lines(result.stderr)[0].startswith("Error: the host name 'no-such-host.invalid' cannot be found (DNS:")
    assert "is it running" not in result.stderr


def test_an_ended_session_is_one_sentence_and_exit_4_everywhere(cli: Cli) -> None:
    cli.login()
    token = cli.token()
    assert cli.sdk(token).auth.logout().bool_value
    sentence = ("Error: the session with http://127.0.0.1:8080 is not valid any more (expired or logged out): run "
                "'wasdi login'")
    for args in (["ws", "create", "floods"], ["ws", "list"], ["whoami"], ["apps", "list"],
                 ["products", "list", "--ws", "floods"]):
        result = cli(*args)
        assert result.exit_code == 4, (args, result.output)
        assert lines(result.stderr) == [sentence], (args, result.stderr)
