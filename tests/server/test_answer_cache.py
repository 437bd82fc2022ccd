"""The listing cache: keyed by declared parameters, dropped on change, bounded by bytes."""

from __future__ import annotations

from tests.conftest import Person, Server

from wasdi_server.api.answer_cache import ENTRY_OVERHEAD, AnswerCache, answer_key
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
    cache = AnswerCache(max_bytes=10 * (1000 + ENTRY_OVERHEAD), version_of=versions.__getitem__)
    for n in range(100):
        key = answer_key("e", f"user{n}", "", {})
        cache.put(key, ("c",), cache.versions(("c",)), answer(1000))
        assert cache.size_bytes <= cache.max_bytes
    assert len(cache) == 10
    assert cache.get(answer_key("e", "user99", "", {}), ("c",), (1,)) is not None
    assert cache.get(answer_key("e", "user0", "", {}), ("c",), (1,)) is None


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
