"""The session cookie a login sets for the browser's header-less requests (map tiles, the broker's socket):
its attributes, its end with the session, and that nothing else of the API accepts it."""

from __future__ import annotations

from tests.conftest import PASSWORD, Person, Server


def login(server: Server, who: Person, **options: object) -> object:
    return server.http.simulate_post("/auth/login", json={"userId": who.user_id, "userPassword": PASSWORD},
                                     **options)  # type: ignore[arg-type]


def test_a_login_sets_an_httponly_strict_cookie_that_lasts_as_the_session(server: Server, alice: Person) -> None:
    r = login(server, alice)
    token = r.json["sessionId"]  # type: ignore[attr-defined]
    cookie = r.cookies["wasdi_session"]  # type: ignore[attr-defined]
    assert cookie.value == token and cookie.http_only and cookie.path == "/"
    assert cookie.max_age == 24 * 3600 and not cookie.secure
    header = r.headers["set-cookie"]  # type: ignore[attr-defined]
    assert "SameSite=Strict" in header and "HttpOnly" in header
    over_tls = login(server, alice, protocol="https")
    assert over_tls.cookies["wasdi_session"].secure  # type: ignore[attr-defined]


def test_a_session_check_renews_it_and_a_logout_ends_it(server: Server, alice: Person) -> None:
    check = server.get("/auth/checksession", alice)
    assert check.status_code == 200 and check.cookies["wasdi_session"].value == alice.token
    failed = server.get("/auth/checksession", Person("x", "not-a-session"))
    assert "wasdi_session" not in failed.cookies
    out = server.get("/auth/logout", alice)
    assert out.status_code == 200
    ended = out.cookies["wasdi_session"]
    assert ended.value == ""
    header = out.headers["set-cookie"]
    assert "expires=thu, 01 jan 1970" in header.lower() and "SameSite=Strict" in header


def test_the_api_itself_never_takes_the_cookie(server: Server, alice: Person) -> None:
    """Only header-less browser requests (tiles, the broker) accept it: a page of another origin that made the
    browser call the API would get nothing done."""
    cookie = {"Cookie": f"wasdi_session={alice.token}"}
    assert server.http.simulate_get("/ws/byuser", headers=cookie).json == []
    created = server.http.simulate_get("/ws/create", params={"name": "x"}, headers=cookie)
    assert created.status_code != 200 or created.json in (None, {}) or not created.json.get("boolValue")
    assert server.get("/ws/byuser", alice).json == []  # nothing was created with the cookie
    assert server.http.simulate_get("/messages/address", headers=cookie).status_code == 401
