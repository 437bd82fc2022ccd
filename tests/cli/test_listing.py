"""A listing the server answers with nothing at all means the session is not valid: the CLI says so."""

from __future__ import annotations

import pytest

from wasdi_cli.errors import CliError
from wasdi_cli.lookup import listing_of
from wasdi_sdk import EmptyResultError


def test_a_listing_is_passed_on_as_it_is() -> None:
    assert listing_of(lambda: ["a", "b"], "styles") == ["a", "b"]
    assert listing_of(list, "styles") == []  # an empty list is an answer, not a failure


def test_no_listing_at_all_is_a_sentence_saying_what_to_do() -> None:
    def refused() -> list[str]:
        raise EmptyResultError("null")

    with pytest.raises(CliError) as raised:
        listing_of(refused, "workflows")
    assert str(raised.value) == "the server listed no workflows (is the session still valid? try 'wasdi login')"
