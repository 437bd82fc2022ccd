"""A Griffe extension (mkdocs.yml, mkdocstrings ``extensions:``): the code in the SDK's docstrings rendered as code.

The docstrings are written for ``help()`` and doctest: an interactive session (``>>>`` lines) and reST literal
blocks (a paragraph ending in ``::``, then an indented block).  Markdown knows neither: ``>>>`` is three nested
quotes and ``::`` stays on the page.  Before mkdocstrings renders a docstring, each of them becomes a fenced block
(``pycon`` for a session, ``python`` for a literal block), so the site shows highlighted code with a copy button
while ``help()`` shows the docstring as written.
"""

from __future__ import annotations

import textwrap
from typing import Any

import griffe

FENCE = "```"


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _fenced(lines: list[str], language: str, indent: int) -> list[str]:
    pad = " " * indent
    body = textwrap.dedent("\n".join(lines)).splitlines()
    return [f"{pad}{FENCE}{language}", *(f"{pad}{line}" if line else "" for line in body), f"{pad}{FENCE}"]


def _ensure_blank(out: list[str]) -> None:
    if out and out[-1].strip():
        out.append("")


def markdown_examples(text: str) -> str:
    """``text`` (a docstring) with its doctest sessions and reST literal blocks as fenced Markdown code blocks;
    fenced blocks already there are left as they are."""
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith(FENCE):
            in_fence = not in_fence
            out.append(line)
            i += 1
            continue
        if in_fence:
            out.append(line)
            i += 1
            continue
        if stripped.startswith(">>>"):
            # A session runs to the next blank line (doctest's own rule: its expected output ends there).
            start = i
            while i < len(lines) and lines[i].strip():
                i += 1
            _ensure_blank(out)
            out += _fenced(lines[start:i], "pycon", _indent(line))
            continue
        if stripped.endswith("::"):
            # reST: "text::" shows as "text:", a lone "::" shows nothing; the block is what is indented deeper.
            base = _indent(line)
            j = i + 1
            while j < len(lines) and not lines[j].strip():
                j += 1
            end = j
            while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > base):
                end += 1
            while end > j and not lines[end - 1].strip():
                end -= 1
            if end > j and _indent(lines[j]) > base:
                head = stripped[:-2].rstrip()
                if head:
                    out.append(" " * base + (head if head.endswith(":") else head + ":"))
                _ensure_blank(out)
                out += _fenced(lines[j:end], "python", base)
                out.append("")
                i = end
                while i < len(lines) and not lines[i].strip():
                    i += 1
                continue
        out.append(line)
        i += 1
    while out and not out[-1].strip():
        out.pop()
    return "\n".join(out)


class DocstringExamples(griffe.Extension):
    """Rewrites every docstring of the loaded packages with :func:`markdown_examples` once they are loaded."""

    def on_object(self, *, obj: griffe.Object, loader: griffe.GriffeLoader, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_examples(obj.docstring.value)
