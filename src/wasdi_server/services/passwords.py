"""Password hashing with scrypt (memory-hard, in the standard library) and random secrets."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string

SCRYPT_N = 2**17
"""scrypt cost (OWASP's current recommendation: N=2^17, r=8, p=1).  Hashes record their own
parameters, so raising it takes effect on each user's next successful login (``needs_rehash``)."""
SCRYPT_R = 8
SCRYPT_P = 1
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _scrypt(password: str, salt: bytes, n: int, r: int, p: int, dklen: int) -> bytes:
    # scrypt needs 128*n*r bytes; OpenSSL refuses above ``maxmem`` (32 MiB by default), so allow that much.
    return hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=dklen,
                          maxmem=129 * n * r * p + 1024 * 1024)


def hash_password(password: str) -> str:
    """``scrypt$N$r$p$salt$key``: 128 MiB of memory per check at N=2^17, so guessing offline is costly."""
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
        if not (1 < int(n) <= 2**20 and 0 < int(r) <= 32 and 0 < int(p) <= 16):
            return False  # a damaged or planted hash must not make one check cost gigabytes
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
