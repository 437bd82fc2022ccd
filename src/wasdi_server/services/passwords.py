"""Password hashing with scrypt (memory-hard, in the standard library) and random secrets."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import string

SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
MIN_PASSWORD_LENGTH = 8
MAX_PASSWORD_LENGTH = 1024


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def hash_password(password: str) -> str:
    """``scrypt$N$r$p$salt$key``: 16 MiB of memory per check, so guessing offline is costly."""
    salt = secrets.token_bytes(16)
    key = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=32)
    return f"scrypt${SCRYPT_N}${SCRYPT_R}${SCRYPT_P}${_b64(salt)}${_b64(key)}"


def verify_password(password: str, stored: str | None) -> bool:
    """Whether ``password`` matches the stored hash (constant-time comparison)."""
    if not stored or not stored.startswith("scrypt$") or len(password) > MAX_PASSWORD_LENGTH:
        return False
    try:
        _, n, r, p, salt, key = stored.split("$")
        expected = _unb64(key)
        actual = hashlib.scrypt(password.encode("utf-8"), salt=_unb64(salt), n=int(n), r=int(r), p=int(p),
                                dklen=len(expected))
    except (ValueError, TypeError):
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
