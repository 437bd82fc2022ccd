"""The docstrings' code as the site shows it (tools/griffe_docstring_examples.py): doctest sessions and reST literal
blocks become fenced Markdown blocks; prose and blocks already fenced stay as written."""

from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def examples() -> ModuleType:
    path = ROOT / "tools" / "griffe_docstring_examples.py"
    spec = importlib.util.spec_from_file_location("griffe_docstring_examples", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_a_doctest_session_becomes_a_pycon_block(examples: ModuleType) -> None:
    text = ("A client.\n\n>>> with Client() as c:\n...     c.login()\n'out'\n\nMore prose.")
    assert examples.markdown_examples(text) == (
        "A client.\n\n```pycon\n>>> with Client() as c:\n...     c.login()\n'out'\n```\n\nMore prose.")


def test_a_session_right_under_a_sentence_gets_its_blank_line(examples: ModuleType) -> None:
    converted = examples.markdown_examples("Try it:\n>>> f(1)\n2")
    assert converted == "Try it:\n\n```pycon\n>>> f(1)\n2\n```"


def test_a_literal_block_becomes_a_python_block_and_its_colons_one(examples: ModuleType) -> None:
    text = ("Heard from the start::\n\n    with listen(ws) as events:\n        for m in events:\n"
            "            print(m)\n\nThen prose.")
    assert examples.markdown_examples(text) == (
        "Heard from the start:\n\n```python\nwith listen(ws) as events:\n    for m in events:\n"
        "        print(m)\n```\n\nThen prose.")


def test_a_lone_double_colon_disappears_and_a_block_in_a_list_keeps_its_indent(examples: ModuleType) -> None:
    text = "- an item, with code\n\n  ::\n\n      x = 1\n\n  after"
    assert examples.markdown_examples(text) == "- an item, with code\n\n  ```python\n  x = 1\n  ```\n\n  after"


def test_prose_fenced_blocks_and_a_colons_without_a_block_stay(examples: ModuleType) -> None:
    for text in ("Plain prose, ``code``, a list:\n\n- one\n- two",
                 "Fenced:\n\n```python\n>>> not converted\n```",
                 "A ratio 1::2 at the end::\nno indented block follows"):
        assert examples.markdown_examples(text) == text


def test_converting_twice_changes_nothing_more(examples: ModuleType) -> None:
    text = "Use::\n\n    f()\n\n>>> g()\n1"
    once = examples.markdown_examples(text)
    assert examples.markdown_examples(once) == once


def test_the_sdk_docstrings_convert(examples: ModuleType) -> None:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.resources.events import EventsResource

    # Griffe hands over a docstring cleaned as inspect.cleandoc cleans it.
    client = examples.markdown_examples(inspect.cleandoc(WasdiClient.__doc__ or ""))
    assert "\n\n```pycon\n>>> with WasdiClient(base_url=" in client
    listen = examples.markdown_examples(inspect.cleandoc(EventsResource.listen.__doc__ or ""))
    assert "heard:\n\n```python\nwith client.events.listen(" in listen and "::" not in listen
