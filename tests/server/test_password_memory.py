"""Password checks stay within the server's memory budget: 8 MiB each (an OWASP-equivalent scrypt setting),
at most ``CONCURRENT_CHECKS`` at once, and hashes made with the former 128 MiB setting still verify."""

from __future__ import annotations

import threading
import time

import pytest

from wasdi_server.domains.accounts import passwords

OWASP_EQUIVALENTS = {(2**17, 8, 1), (2**16, 8, 2), (2**15, 8, 3), (2**14, 8, 5), (2**13, 8, 10)}
"""The scrypt settings OWASP's password storage guidance lists as giving the same protection."""


def test_the_setting_is_an_owasp_equivalent_of_8_mib() -> None:
    # tests/conftest.py lowers SCRYPT_N for speed; the module's own value is what a server uses
    import importlib

    fresh = importlib.reload(passwords)
    try:
        assert (fresh.SCRYPT_N, fresh.SCRYPT_R, fresh.SCRYPT_P) in OWASP_EQUIVALENTS
        assert 128 * fresh.SCRYPT_N * fresh.SCRYPT_R == 8 * 2**20
    finally:
        importlib.reload(passwords)


def test_a_hash_of_the_former_128_mib_setting_still_verifies_and_is_renewed() -> None:
    salt = b"0123456789abcdef"
    old_key = passwords._scrypt("correct-horse-1", salt, 2**17, 8, 1, 32)
    old = f"scrypt${2**17}$8$1${passwords._b64(salt)}${passwords._b64(old_key)}"
    assert passwords.verify_password("correct-horse-1", old)
    assert not passwords.verify_password("wrong-horse-1", old)
    assert passwords.needs_rehash(old)
    assert not passwords.verify_password("correct-horse-1", f"scrypt${2**18}$8$1${passwords._b64(salt)}$AAAA")


def test_checks_run_at_most_two_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    running, most = 0, 0
    lock = threading.Lock()
    real = passwords.hashlib.scrypt

    def counted(*args: object, **kwargs: object) -> bytes:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.05)
        with lock:
            running -= 1
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(passwords.hashlib, "scrypt", counted)
    stored = passwords.hash_password("correct-horse-1")
    threads = [threading.Thread(target=passwords.verify_password, args=("correct-horse-1", stored)) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert most == passwords.CONCURRENT_CHECKS == 2
