"""The one bounded cache: each bound holds, least recently used goes first, ``on_evict`` hears of every entry the
cache drops by itself, and many threads at once never pass a bound."""

from __future__ import annotations

import threading

import pytest

from wasdi_server.bounded_cache import BoundedCache


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_cache_without_a_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="bound"):
        BoundedCache[str, int]()


def test_the_least_recently_used_entry_goes_first() -> None:
    evicted: list[tuple[str, int]] = []
    cache: BoundedCache[str, int] = BoundedCache(3, on_evict=lambda k, v: evicted.append((k, v)))
    for number, key in enumerate("abc"):
        cache.put(key, number)
    assert cache.get("a") == 0  # now the most recently used
    cache.put("d", 3)
    assert list(cache) == ["c", "a", "d"] and evicted == [("b", 1)]
    cache.put("c", 20)  # a replacement is no eviction
    assert len(cache) == 3 and evicted == [("b", 1)] and cache.get("c") == 20


def test_the_weight_bound_holds_and_an_entry_heavier_than_it_is_refused() -> None:
    evicted: list[str] = []
    cache: BoundedCache[str, bytes] = BoundedCache(max_weight=100, on_evict=lambda k, v: evicted.append(k))
    for key in "abcd":
        assert cache.put(key, b"x" * 30, weight=30)
    assert cache.total_weight == 90 and evicted == ["a"]
    assert not cache.put("huge", b"x" * 101, weight=101)
    assert "huge" not in cache and cache.total_weight == 90
    assert cache.pop("b") == b"x" * 30 and cache.total_weight == 60 and evicted == ["a"]


def test_entries_expire_after_their_age() -> None:
    clock = Clock()
    evicted: list[str] = []
    cache: BoundedCache[str, str] = BoundedCache(ttl=5.0, clock=clock, on_evict=lambda k, v: evicted.append(k))
    cache.put("user", "alice")
    clock.now += 4.9
    assert cache.get("user") == "alice"
    clock.now += 0.2
    assert cache.get("user") is None and "user" not in cache and evicted == ["user"]
    assert len(cache) == 0


def test_discard_where_removes_what_matches() -> None:
    cache: BoundedCache[tuple[str, int], str] = BoundedCache(10)
    for index in range(4):
        cache.put(("layer", index), "png")
        cache.put(("other", index), "png")
    assert cache.discard_where(lambda key, _value: key[0] == "layer") == 4
    assert sorted(cache) == [("other", i) for i in range(4)]


def test_many_threads_never_pass_the_bounds() -> None:
    cache: BoundedCache[int, int] = BoundedCache(50, max_weight=400)
    seen: list[tuple[int, int]] = []

    def work(offset: int) -> None:
        for number in range(2000):
            cache.put(offset + number, number, weight=1 + number % 9)
            cache.get(offset + number // 2)
            if number % 100 == 0:
                seen.append((len(cache), cache.total_weight))

    threads = [threading.Thread(target=work, args=(n * 10_000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert seen and all(count <= 50 and weight <= 400 for count, weight in seen)
    assert cache.total_weight == sum(1 + v % 9 for _, v in cache.items())
