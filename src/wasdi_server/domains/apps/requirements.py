"""Which package specs may reach an installer: a name, optional extras, optional version clauses. No
options (``-e``, ``--index-url``), URLs, paths or environment markers: an app's ``pip.txt`` and the
package manager's ``updateCommand`` name packages, they do not steer the installer."""

from __future__ import annotations

import re

_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,98}[A-Za-z0-9])?"
_VERSION = r"[A-Za-z0-9*+!._-]{1,64}"
_CLAUSE = rf"(?:===|==|!=|~=|>=|<=|>|<)\s*{_VERSION}"
SPEC = re.compile(rf"^({_NAME})(\[{_NAME}(?:\s*,\s*{_NAME})*\])?\s*({_CLAUSE}(?:\s*,\s*{_CLAUSE})*)?$")


def package_spec(text: str) -> str | None:
    """The spec, trimmed, when it is a plain requirement; ``None`` otherwise."""
    candidate = text.strip()
    if not candidate or len(candidate) > 300:
        return None
    return candidate if SPEC.match(candidate) else None


def package_name(spec: str) -> str:
    """The distribution name of a valid spec."""
    match = SPEC.match(spec.strip())
    return match.group(1) if match else spec.strip()


def read_requirements(text: str) -> tuple[list[str], list[str]]:
    """The valid specs of a ``pip.txt`` and the lines refused (comments and blank lines are neither)."""
    specs: list[str] = []
    refused: list[str] = []
    for raw in text.splitlines():
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        spec = package_spec(line)
        if spec is None:
            refused.append(line[:200])
        else:
            specs.append(spec)
    return specs, refused
