"""The sweep's rules in the permission module: what one mg_sweep may change, and how many messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.policy import SWEEP_FLAGS, SweepChange, check_sweep_change, check_sweep_size

PROCESSED = "Asistent"
CLASSES = {"Účetnictví": "faktury", "Banka": "výpisy", "Škola": "třídní schůzky"}


def refused(call: Callable[[], object], code: str, *fragments: str) -> MailError:
    with pytest.raises(MailError) as info:
        call()
    assert info.value.code == code, info.value.message
    for fragment in fragments:
        assert fragment in info.value.message, (fragment, info.value.message)
    return info.value


def change(given: dict[str, Any], processed: str | None = PROCESSED) -> SweepChange:
    return check_sweep_change("o", given, processed, CLASSES)


def test_flags_are_messages_only() -> None:
    assert SWEEP_FLAGS == ("seen", "flagged")
    assert change({"seen": True}) == SweepChange("flag", "\\Seen", True, on_threads=False)
    assert change({"seen": False}) == SweepChange("flag", "\\Seen", False, on_threads=False)
    assert change({"flagged": True}) == SweepChange("flag", "\\Flagged", True, on_threads=False)
    assert change({"flagged": False, "seen": None}) == SweepChange("flag", "\\Flagged", False, on_threads=False)


def test_the_processed_label_goes_on_messages_in_its_configured_spelling() -> None:
    assert change({"add_label": " asistent "}) == SweepChange("label", PROCESSED, True, on_threads=False)
    assert change({"remove_label": "ASISTENT"}) == SweepChange("label", PROCESSED, False, on_threads=False)


def test_a_classification_goes_on_threads_and_replaces_the_others() -> None:
    added = change({"add_label": "banka"})
    assert added == SweepChange("label", "Banka", True, on_threads=True, replaces=("Účetnictví", "Škola"))
    # Composed and decomposed letters are the same label.
    assert change({"add_label": "U\u0301četnictví"}).name == "Účetnictví"
    removed = change({"remove_label": "Škola"})
    assert removed == SweepChange("label", "Škola", False, on_threads=True, replaces=())


@pytest.mark.parametrize(
    ("given", "fragments"),
    [
        ({}, ("exactly one", "not 0")),
        ({"seen": None, "flagged": None}, ("exactly one", "not 0")),
        ({"seen": True, "flagged": False}, ("exactly one", "not 2")),
        ({"add_label": PROCESSED, "remove_label": PROCESSED}, ("not 2",)),
        ({"archive": True}, ('"archive"', "never archives or trashes")),
        ({"trash": True, "seen": True}, ('"trash"',)),
        ({"answered": True}, ('"answered"',)),
        ({"seen": "yes"}, ("`seen` takes true or false",)),
        ({"flagged": 1}, ("`flagged` takes true or false",)),
        ({"add_label": 3}, ("`add_label` takes a label name",)),
        ({"add_label": ""}, ("empty label",)),
        ({"add_label": "Banka\r\nX"}, ("line break",)),
    ],
)
def test_bad_changes_are_invalid_input(given: dict[str, Any], fragments: tuple[str, ...]) -> None:
    error = refused(lambda: change(given), "invalid_input", *fragments)
    assert "Nothing was changed" in error.message or "label" in error.message


@pytest.mark.parametrize(
    ("given", "fragments"),
    [
        ({"add_label": "\\Inbox"}, ("Gmail's own labels",)),
        ({"remove_label": "\\Inbox"}, ("Gmail's own labels",)),
        ({"add_label": "\\Trash"}, ("Gmail's own labels",)),
        ({"add_label": "\\Starred"}, ("Gmail's own labels",)),
        (
            {"add_label": "Soukromé"},
            (
                '"Soukromé" is not configured for mailbox "o"',
                'On a sweep these tools take only: "Asistent", "Účetnictví"',
            ),
        ),
        ({"remove_label": "Projekt/Lipová"}, ("user's own",)),
    ],
)
def test_system_and_user_labels_are_forbidden(given: dict[str, Any], fragments: tuple[str, ...]) -> None:
    refused(lambda: change(given), "label_forbidden", *fragments)


def test_without_a_processed_label_only_classifications_and_flags() -> None:
    refused(lambda: change({"add_label": PROCESSED}, processed=None), "label_forbidden", '"Účetnictví", "Banka"')
    assert change({"add_label": "Banka"}, processed=None).on_threads is True
    refused(lambda: check_sweep_change("o", {"add_label": "x"}, None, {}), "label_forbidden", "(none configured)")


def test_the_cap_is_inclusive_and_the_error_names_count_cap_and_narrowing() -> None:
    check_sweep_size("o", 0, 1000, threads=False)
    check_sweep_size("o", 1000, 1000, threads=False)
    error = refused(
        lambda: check_sweep_size("o", 1001, 1000, threads=False),
        "query_too_broad",
        "1001 messages in mailbox",
        "sweep_limit of 1000",
        "Nothing was changed",
        "Narrow the query",
        "not something to propose raising",
    )
    assert "threads" not in error.message
    refused(
        lambda: check_sweep_size("o", 11, 10, threads=True), "query_too_broad", "11 messages in the matched threads"
    )
    check_sweep_size("o", 10_000, 10_000, threads=True)
