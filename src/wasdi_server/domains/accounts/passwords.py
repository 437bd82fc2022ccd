"""Password hashing with scrypt (memory-hard, in the standard library) and random secrets."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string
import threading

SCRYPT_N = 2**13
"""scrypt cost: N=2^13, r=8, p=10, one of the configurations OWASP's password storage guidance lists as
equivalent to N=2^17, r=8, p=1, with 8 MiB of memory per check instead of 128 MiB (a server's whole memory
budget is 150 MiB, bench/transfer.py).  Hashes record their own parameters, so a change takes effect on each
user's next successful login (``needs_rehash``)."""
SCRYPT_R = 8
SCRYPT_P = 10
MAX_SCRYPT_BYTES = 128 * 2**17 * 8
"""The most memory one check may take: what the old N=2^17 hashes need, and no more (a planted hash with
bigger parameters is refused, not run)."""
CONCURRENT_CHECKS = 2
"""scrypt computations at once; more callers wait, so a burst of logins cannot multiply the memory."""
_checks = threading.BoundedSemaphore(CONCURRENT_CHECKS)
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    # scrypt needs 128*n*r bytes (its p lanes run one after the other in OpenSSL); OpenSSL refuses above
    # ``maxmem`` (32 MiB by default), so allow that much.
    with _checks:
        return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=dklen,
                              maxmem=129 * n * r + 1024 * 1024)


def hash_password(password: str) -> str:
    """``scrypt$N$r$p$salt$key``: 8 MiB of memory and ten passes per check, so guessing offline is costly."""
    salt = secrets.token_bytes(16)
    key = _scrypt(password, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P, 32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(key)}"


def hash_secret(secret: str) -> str:
    """``sha256$salt$digest`` of a random secret this server made (a mailed reset password: 95 random bits, so
    a fast hash leaves nothing to guess offline, and checking one costs the same microseconds every time)."""
    salt = secrets.token_bytes(16)
    return f"sha256${_b64(salt)}${_b64(hashlib.sha256(salt + secret.encode('utf-8')).digest())}"


def verify_secret(secret: str, stored: str | None) -> bool:
    """Whether ``secret`` matches a ``hash_secret`` hash (a dummy one when ``stored`` is not one: same work)."""
    parts = (stored or "").split("$")
    if len(parts) != 3 or parts[0] != "sha256":
        parts = _DUMMY_SECRET.split("$")
        stored = None
    try:
        salt, expected = _unb64(parts[1]), _unb64(parts[2])
    except ValueError:
        return False
    actual = hashlib.sha256(salt + secret.encode("utf-8", "surrogatepass")).digest()
    return hmac.compare_digest(actual, expected) and stored is not None


_DUMMIES: dict[tuple[int, int, int], str] = {}


def dummy_hash() -> str:
    """A hash of a random password with today's parameters: what a password is checked against when there is
    no account (or no pending reset), so the check costs what a real one costs and its time says nothing."""
    params = (SCRYPT_N, SCRYPT_R, SCRYPT_P)
    if params not in _DUMMIES:
        _DUMMIES[params] = hash_password(secrets.token_urlsafe(16))
    return _DUMMIES[params]


def needs_rehash(stored: str | None) -> bool:
    """Whether ``stored`` was made with other parameters than today's (rehash it at the next login)."""
    parts = (stored or "").split("$")
    return len(parts) != 6 or parts[0] != "scrypt" or parts[1:4] != [str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P)]


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` matches the stored hash (constant-time comparison)."""
    if not stored or not stored.startswith("scrypt$") or len(password) > MAX_PASSWORD_LENGTH:
        return False
    try:
        _, n, r, p, salt, key = stored.split("$")
        expected = _unb64(key)
        if not (int(n) > 1 and 0 < int(r) <= 32 and 0 < int(p) <= 16 and 128 * int(n) * int(r) <= MAX_SCRYPT_BYTES):
            return False  # a damaged or planted hash must not make one check cost more memory than ours
        actual = _scrypt(password, _unb64(salt), int(n), int(r), int(p), len(expected))
    except (ValueError, TypeError, MemoryError):
        return False
    return hmac.compare_digest(actual, expected)


def password_problem(password: str | None) -> str | None:
    """Why ``password`` breaks the policy (at least 8 characters), or ``None``."""
    if not password or len(password) < MIN_PASSWORD_LENGTH:
        return f"the password must be at least {MIN_PASSWORD_LENGTH} characters long"
    if len(password) > MAX_PASSWORD_LENGTH:
        return f"the password must be at most {MAX_PASSWORD_LENGTH} characters long"
    return None


def random_password(length: int = 16) -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def new_token() -> str:
    """A session token: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


_DUMMY_SECRET = hash_secret(secrets.token_urlsafe(16))
