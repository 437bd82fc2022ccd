"""Reading the file name of a download from its ``Content-Disposition`` header."""

from __future__ import annotations

from email.message import Message
from email.utils import collapse_rfc2231_value


def disposition_filename(value: str) -> str:
    """The file name a ``Content-Disposition`` header gives (``filename*`` first, RFC 6266), or ``""``.

    Parsed by the standard library's MIME header parser, which knows quoting and RFC 2231/8187 encoding.
    """
    message = Message()
    message["content-disposition"] = value
    try:
        params = message.get_params(header="content-disposition") or []
        names = [v for k, v in params if k == "filename"]
        # The parser hands the extended (``filename*``) form back as a (charset, language, text) tuple.
        extended = [v for v in names if isinstance(v, tuple)]
        chosen = extended[0] if extended else names[0] if names else ""
        return str(collapse_rfc2231_value(chosen)).strip()
    except (LookupError, ValueError, UnicodeError):
        return ""
