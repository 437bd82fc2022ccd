"""Logging in against a stranger: the throttle cannot be turned against others, and neither the answers nor
the work done (so the time taken) of login and lostPassword tell known accounts from unknown ones."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from tests.conftest import PASSWORD, Person, Server

from wasdi_server.domains.accounts import passwords

OFFICE = "198.51.100.7"
"""One address for everyone behind an office's NAT (or a reverse proxy)."""


def login(server: Server, user: str, password: str, address: str = OFFICE) -> dict[str, Any]:
    r = server.http.simulate_post("/auth/login", json={"userId": user, "userPassword": password},
                                  remote_addr=address)
    assert r.status_code == 200
    return dict(r.json)


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The number of password hash computations so far (scrypt runs, and the fast hashes of mailed secrets,
    counted apart): the work, hence the time, of a call."""
    count = [0, 0]
    real_scrypt, real_sha256 = passwords._scrypt, passwords.hashlib.sha256

    def scrypt(*args: Any, **kwargs: Any) -> bytes:
        count[0] += 1
        return real_scrypt(*args, **kwargs)

    def sha256(*args: Any, **kwargs: Any) -> Any:
        count[1] += 1
        return real_sha256(*args, **kwargs)

    monkeypatch.setattr(passwords, "_scrypt", scrypt)
    monkeypatch.setattr(passwords.hashlib, "sha256", sha256)
    passwords.dummy_hash()  # made once, at the first refusal: not part of any one call's cost
    count[:] = [0, 0]
    yield count


def test_failures_against_unknown_users_do_not_lock_a_shared_address(server: Server, alice: Person,
                                                                     bob: Person) -> None:
    for who in (alice, bob):
        assert login(server, who.user_id, PASSWORD)["sessionId"]  # both have logged in from the office
    for n in range(60):
        assert login(server, f"nobody{n}@example.org", "guess-guess")["userId"] == ""
    for who in (alice, bob):
        assert login(server, who.user_id, PASSWORD)["sessionId"], who
    # one address trying many accounts is still slowed, for the accounts that never logged in from it
    carol = server.add_user("carol@example.org")
    assert login(server, carol.user_id, PASSWORD)["userId"] == ""
    assert login(server, carol.user_id, PASSWORD, address="192.0.2.10")["sessionId"]


def test_failures_against_a_known_user_do_not_lock_the_others_at_the_address(server: Server, alice: Person,
                                                                             bob: Person) -> None:
    assert login(server, bob.user_id, PASSWORD)["sessionId"]
    victims = [alice.user_id] + [server.add_user(f"victim{n}@example.org").user_id for n in range(5)]
    for victim in victims:
        for _ in range(6):  # each costs a real password check, and counts
            assert login(server, victim, "wrong-password")["userId"] == ""
    assert login(server, bob.user_id, PASSWORD)["sessionId"]


def test_login_answers_and_works_the_same_for_known_and_unknown_accounts(server: Server, alice: Person,
                                                                         checks: list[int]) -> None:
    server.services.users.add("sleeper@example.org", PASSWORD)
    server.services.users.users.update("sleeper@example.org", {"active": False})
    server.get("/auth/lostPassword", userId=alice.user_id)  # a reset pending: two hashes to check against
    server.services.users.later.drain()
    answers, costs = [], []
    for user in ("ghost@example.org", alice.user_id, "sleeper@example.org", "bob@example.org"):
        checks[:] = [0, 0]
        answers.append(login(server, user, "wrong-password", address=f"192.0.2.{len(costs)}"))
        costs.append(tuple(checks))
    assert all(a == answers[0] for a in answers) and answers[0]["userId"] == ""
    assert costs == [(1, 1)] * 4  # one password check, one reset-secret check (a dummy where there is none)
    checks[:] = [0, 0]
    assert login(server, alice.user_id, PASSWORD, address="192.0.2.99")["sessionId"]
    assert checks[0] == 1


def test_lost_password_answers_and_works_the_same_for_known_and_unknown_accounts(server: Server, alice: Person,
                                                                                 checks: list[int]) -> None:
    known = server.get("/auth/lostPassword", userId=alice.user_id)
    known_cost = list(checks)
    checks[:] = [0, 0]
    unknown = server.get("/auth/lostPassword", userId="ghost@example.org")
    assert (unknown.status_code, unknown.json) == (known.status_code, known.json) == (200, {"boolValue": True,
                                                                                           "intValue": 0})
    assert checks == known_cost == [0, 1]  # the store and the mail come after the answer
    assert [m["To"] for m in server.mails()] == [alice.user_id]  # only the real account is mailed


def test_a_failed_reset_mail_leaves_the_account_as_it_was(server: Server, alice: Person,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(to: str, subject: str, body: str) -> None:
        raise OSError("the mail server is down")

    monkeypatch.setattr(server.services.users.mailer, "send", broken)
    r = server.get("/auth/lostPassword", userId=alice.user_id)
    assert r.status_code == 200 and r.json["boolValue"] is True
    server.services.users.later.drain()
    assert server.services.users.get(alice.user_id).get("resetPasswordHash") is None
