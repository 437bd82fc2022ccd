"""The one ``Content-Disposition`` encoder for every file the server serves (RFC 6266, RFC 8187).

A name is sent twice: ``filename`` is a plain ASCII fallback (every character a quoted string could
misread becomes ``_``) and ``filename*`` carries the exact name, UTF-8 percent-encoded.  No name can
add parameters of its own or break the header, whatever it contains.
"""

from __future__ import annotations

from urllib.parse import quote

MAX_NAME_CHARS = 255
FALLBACK_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-+()[]~,!#&@")
"""Characters no header parser, however naive, reads as quoting or as the start of a parameter."""


def ascii_fallback(name: str) -> str:
    """``name`` with every character outside ``FALLBACK_CHARS`` replaced by ``_``."""
    return "".join(ch if ch in FALLBACK_CHARS else "_" for ch in name) or "download"


def content_disposition(name: str, *, inline: bool = False) -> str:
    """The header value serving a file called ``name`` (``attachment`` unless ``inline``)."""
    name = name.replace("\\", "/").rsplit("/", 1)[-1][:MAX_NAME_CHARS] or "download"
    kind = "inline" if inline else "attachment"
    fallback = ascii_fallback(name)
    if fallback == name:
        return f'{kind}; filename="{name}"'
    return f"{kind}; filename=\"{fallback}\"; filename*=UTF-8''{quote(name, safe='')}"
