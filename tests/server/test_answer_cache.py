"""The listing cache: keyed by declared parameters, dropped on change, bounded by bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.conftest import Person, Server

from wasdi_server.api.answer_cache import ENTRY_OVERHEAD, AnswerCache, answer_key, key_bytes
from wasdi_server.api.answers import Answer
from wasdi_server.api.framework import EndpointResource


def listing_cache(server: Server) -> AnswerCache:
    resource = server.app._router.find("/ws/byuser")[0]
    assert isinstance(resource, EndpointResource)
    return resource.cache


def test_junk_parameters_make_no_new_entries(server: Server, alice: Person) -> None:
    cache = listing_cache(server)
    for n in range(50):
        r = server.get("/ws/byuser", alice, **{f"junk{n}": "x" * 5000})
        assert r.status_code == 200
    assert len(cache) == 1


def test_an_answer_is_dropped_as_soon_as_its_collection_changes(server: Server, alice: Person) -> None:
    cache = listing_cache(server)
    before = server.get("/ws/byuser", alice).json
    assert len(cache) == 1
    assert server.get("/ws/create", alice, name="fresh").status_code == 200
    # the next lookup drops the superseded answer instead of keeping it beside the new one
    after = server.get("/ws/byuser", alice).json
    assert len(after) == len(before) + 1
    assert len(cache) == 1


def test_answers_are_per_caller(server: Server, alice: Person, bob: Person) -> None:
    server.get("/ws/create", alice, name="mine")
    assert server.get("/ws/byuser", alice).json and server.get("/ws/byuser", bob).json == []


def answer(size: int) -> Answer:
    return Answer(200, body=b"x" * size)


def test_the_cache_is_bounded_by_bytes() -> None:
    versions = {"c": 1}
    entry = 1000 + ENTRY_OVERHEAD + key_bytes(answer_key("e", "user00", "", {}))
    cache = AnswerCache(max_bytes=10 * entry, version_of=versions.__getitem__)
    for n in range(100):
        key = answer_key("e", f"user{n:02d}", "", {})
        cache.put(key, ("c",), cache.versions(("c",)), answer(1000))
        assert cache.size_bytes <= cache.max_bytes
    assert len(cache) == 10
    assert cache.get(answer_key("e", "user99", "", {}), ("c",), (1,)) is not None
    assert cache.get(answer_key("e", "user00", "", {}), ("c",), (1,)) is None


def test_a_change_drops_every_answer_of_that_collection_and_only_those() -> None:
    versions = {"a": 1, "b": 1}
    cache = AnswerCache(version_of=versions.__getitem__)
    cache.put(answer_key("x", "u1", "", {}), ("a",), (1,), answer(10))
    cache.put(answer_key("x", "u2", "", {}), ("a",), (1,), answer(10))
    cache.put(answer_key("y", "u1", "", {}), ("b",), (1,), answer(10))
    versions["a"] = 2
    assert cache.get(answer_key("x", "u1", "", {}), ("a",), cache.versions(("a",))) is None
    assert len(cache) == 1 and cache.get(answer_key("y", "u1", "", {}), ("b",), (1,)) is not None


def test_an_answer_computed_from_data_that_changed_meanwhile_is_not_kept() -> None:
    cache = AnswerCache(version_of=lambda name: 0)
    cache.get(answer_key("x", "u", "", {}), ("a",), (5,))
    cache.put(answer_key("x", "u", "", {}), ("a",), (4,), answer(10))
    assert len(cache) == 0


def test_params_with_lists_make_hashable_keys() -> None:
    assert answer_key("x", None, "", {"ids": ["a", "b"]}) == answer_key("x", None, "", {"ids": ["a", "b"]})


def test_a_zero_byte_bound_turns_the_cache_off() -> None:
    cache = AnswerCache(max_bytes=0, version_of=lambda name: 0)
    cache.put(answer_key("x", "u", "", {}), ("a",), (0,), answer(1))
    assert len(cache) == 0


def test_a_key_counts_against_the_bound() -> None:
    cache = AnswerCache(max_bytes=1024 * 1024, version_of=lambda name: 1)
    cache.put(answer_key("x", "u", "http://" + "h" * 100_000, {}), ("a",), (1,), answer(10))
    assert cache.size_bytes >= 100_000


INVALID_HOSTS = ["h" * 100_000, "a b", "x/y", "caf\u00e9.org", ":80", "[::1", "host:99999", "host:0", "a..b",
                 "-lead.org", "h" * 300, "x\ty", "evil.org@good.org", "x.org:80:80"]


@pytest.mark.parametrize("host", INVALID_HOSTS, ids=range(len(INVALID_HOSTS)))
def test_a_host_header_that_is_not_a_host_is_refused_before_anything(server: Server, alice: Person,
                                                                     host: str) -> None:
    r = server.http.simulate_get("/ws/byuser", headers={**alice.headers, "Host": host})
    assert r.status_code == 400 and "invalid Host header" in r.json["message"], r.text[:200]
    assert host not in r.text
    assert len(listing_cache(server)) == 0
    assert server.http.simulate_get("/wasdi/hello", headers={"Host": host}).status_code == 400


@pytest.mark.parametrize("host", ["example.org", "Example.ORG.", "example.org:80", "127.0.0.1:8080", "[::1]:8080",
                                  "wasdi_server:8080", "xn--caf-dma.org"])
def test_real_hosts_are_served(server: Server, alice: Person, host: str) -> None:
    assert server.http.simulate_get("/ws/byuser", headers={**alice.headers, "Host": host}).status_code == 200


def test_spellings_of_one_host_share_one_entry(server: Server, alice: Person) -> None:
    for host in ("example.org", "EXAMPLE.org", "example.org.", "example.org:80"):
        assert server.http.simulate_get("/ws/byuser", headers={**alice.headers, "Host": host}).status_code == 200
    assert len(listing_cache(server)) == 1


def test_many_hosts_stay_within_the_bytes_bound(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", answer_cache_bytes=256 * 1024)
    try:
        alice = server.add_user("alice@example.org")
        cache = listing_cache(server)
        for n in range(600):
            host = f"n{n:04d}." + ".".join(["h" * 60] * 4)
            r = server.http.simulate_get("/ws/byuser", headers={**alice.headers, "Host": host})
            assert r.status_code == 200
        assert cache.size_bytes <= 256 * 1024
        assert cache.size_bytes >= len(cache) * 250  # every entry pays for the host in its key
    finally:
        server.close()


def test_with_a_public_url_the_host_makes_no_entries(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", public_url="https://wasdi.example.org")
    try:
        alice = server.add_user("alice@example.org")
        for n in range(50):
            headers = {**alice.headers, "Host": f"host{n}.example.org"}
            assert server.http.simulate_get("/ws/byuser", headers=headers).status_code == 200
        assert len(listing_cache(server)) == 1
    finally:
        server.close()
