"""Table-driven tests of the label and flag rules (policy/labels.py), hostile inputs first: which
labels a message or a thread may get, and which flags may be set."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import pytest

from mcp_multi_gmail.policy import ALLOWED_FLAGS, check_flags, check_message_label, check_thread_label, imap_flag
from policy_refusals import refused

# --- labels --------------------------------------------------------------------------------

PROCESSED = "asistent/Zpracováno"
CLASSES = {"asistent/čeká": "waiting for someone", "asistent/faktury": "invoices", "Urgent": "now"}


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("asistent/Zpracováno", PROCESSED),
        ("ASISTENT/ZPRACOVÁNO", PROCESSED),
        ("  asistent/zpracováno \t", PROCESSED),
        (unicodedata.normalize("NFD", "asistent/zpracováno"), PROCESSED),
    ],
    ids=["exact", "upper", "trimmed", "nfd"],
)
def test_message_label_allowed(label: str, expected: str) -> None:
    assert check_message_label("work", label, PROCESSED, CLASSES) == expected


def test_message_label_returns_configured_spelling_for_upper_case() -> None:
    assert check_message_label("work", "PROCESSED", "processed", {}) == "processed"


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("asistent/čeká", "asistent/čeká"),
        ("ASISTENT/ČEKÁ", "asistent/čeká"),
        (unicodedata.normalize("NFD", "asistent/čeká"), "asistent/čeká"),
        (" urgent ", "Urgent"),
    ],
    ids=["exact", "upper", "nfd-spelling", "trimmed-case"],
)
def test_thread_label_allowed(label: str, expected: str) -> None:
    assert check_thread_label("work", label, PROCESSED, CLASSES) == expected


def test_thread_label_configured_in_nfd_matches_nfc_input() -> None:
    nfd = unicodedata.normalize("NFD", "čeká")
    assert check_thread_label("work", "čeká", None, {nfd: "waiting"}) == nfd


LabelCheck = Callable[[str, str, "str | None", dict[str, str]], str]
BOTH: list[LabelCheck] = [check_message_label, check_thread_label]


@pytest.mark.parametrize("check", BOTH, ids=["message", "thread"])
@pytest.mark.parametrize(
    ("label", "code", "fragment"),
    [
        ("", "invalid_input", "empty label"),
        ("   ", "invalid_input", "empty label"),
        ("\t", "invalid_input", "empty label"),
        ("asistent/čeká\r\nX", "invalid_input", "line break or control"),
        ("Urgent\n", "invalid_input", "line break or control"),
        ("Urg\x00ent", "invalid_input", "line break or control"),
        ("\\Inbox", "label_forbidden", "Gmail's own labels"),
        ("\\\\Inbox", "label_forbidden", "Gmail's own labels"),
        ("\\Trash", "label_forbidden", "Gmail's own labels"),
        (" \\Starred", "label_forbidden", "Gmail's own labels"),
        ("\\Important", "label_forbidden", "archiving, starring or deleting"),
        ("Private", "label_forbidden", "neither applied nor removed"),
        ("asistent", "label_forbidden", 'not configured for mailbox "work"'),
        ("asistent/zpracováno/x", "label_forbidden", "user's own"),
    ],
    ids=[
        "empty",
        "blank",
        "tab-only",
        "crlf",
        "trailing-lf",
        "nul",
        "inbox",
        "double-backslash-inbox",
        "trash",
        "spaced-system-label",
        "important",
        "user-label",
        "parent-of-nested",
        "child-of-processed",
    ],
)
def test_label_refused_by_both(check: LabelCheck, label: str, code: str, fragment: str) -> None:
    err = refused(lambda: check("work", label, PROCESSED, CLASSES), code, fragment)
    assert "\r" not in err.message and "\x00" not in err.message


def test_message_label_refuses_classification() -> None:
    refused(
        lambda: check_message_label("work", "Asistent/Čeká", PROCESSED, CLASSES),
        "label_forbidden",
        "is a classification",
        "mg_label_thread",
    )


@pytest.mark.parametrize("label", [PROCESSED, "Asistent/zpracováno", " ASISTENT/ZPRACOVÁNO "])
def test_thread_label_refuses_processed_label(label: str) -> None:
    refused(
        lambda: check_thread_label("work", label, PROCESSED, CLASSES),
        "label_forbidden",
        "processed label",
        "replies that arrive later",
        "tomorrow's reply would look already processed",
        "mg_label_message",
    )


def test_thread_label_refuses_processed_in_other_case() -> None:
    refused(
        lambda: check_thread_label("work", "Processed", "processed", {"waiting": "w"}),
        "label_forbidden",
        "later",
    )


@pytest.mark.parametrize(
    "label",
    [
        "\u0430sistent/čeká",  # Cyrillic а for Latin a
        "asistent/\u010dek\u0430\u0301",  # Cyrillic а + combining acute in place of á
        "Urgent\u200b",  # zero-width space
        "Ｕrgent",  # fullwidth U: NFKC would fold it, NFC does not
        "asistent／čeká",  # fullwidth solidus
    ],
    ids=["cyrillic-a", "cyrillic-a-acute", "zero-width", "fullwidth-letter", "fullwidth-slash"],
)
def test_thread_label_refuses_look_alikes(label: str) -> None:
    refused(lambda: check_thread_label("work", label, PROCESSED, CLASSES), "label_forbidden", "not configured")


@pytest.mark.parametrize(
    ("configured", "same", "other"),
    [
        ("asistent/faktury", "ASISTENT/Faktury", "ASıSTENT/FAKTURY"),
        ("Straße", "STRAßE", "STRASSE"),
        ("Straße", "STRA\u1e9eE", "strasse"),
    ],
    ids=["dotless-i", "sharp-s-upper", "capital-sharp-s"],
)
def test_label_case_folding_keeps_other_letters_apart(configured: str, same: str, other: str) -> None:
    # Only case is ignored: ı is not i, and ß is not ss, though their capitals are the same.
    assert check_thread_label("work", same, None, {configured: "x"}) == configured
    refused(lambda: check_thread_label("work", other, None, {configured: "x"}), "label_forbidden", "not configured")


def test_message_label_refuses_look_alike_of_processed() -> None:
    refused(
        lambda: check_message_label("work", "\u0430sistent/zpracováno", PROCESSED, CLASSES),
        "label_forbidden",
        "not configured",
    )


@pytest.mark.parametrize(
    ("check", "processed", "classes", "listed"),
    [
        (check_message_label, PROCESSED, CLASSES, f'On a message these tools take only: "{PROCESSED}"'),
        (check_message_label, None, CLASSES, "On a message these tools take only: (none configured)"),
        (check_thread_label, PROCESSED, {}, "On a thread these tools take only: (none configured)"),
        (
            check_thread_label,
            PROCESSED,
            CLASSES,
            'On a thread these tools take only: "asistent/čeká", "asistent/faktury", "Urgent"',
        ),
    ],
    ids=["message-lists-processed", "message-none", "thread-none", "thread-lists-classes"],
)
def test_label_refusal_lists_what_the_tool_takes(
    check: LabelCheck, processed: str | None, classes: dict[str, str], listed: str
) -> None:
    refused(
        lambda: check("work", "Private", processed, classes),
        "label_forbidden",
        listed,
        "classification_labels",
        "mg_reload_config",
    )


def test_message_label_with_labelling_off_refuses_former_processed_name() -> None:
    refused(lambda: check_message_label("work", "processed", None, {}), "label_forbidden", "(none configured)")


# --- flags ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((True, None, None), {"seen": True}),
        ((None, False, None), {"flagged": False}),
        ((None, None, True), {"answered": True}),
        ((False, True, False), {"seen": False, "flagged": True, "answered": False}),
    ],
)
def test_check_flags(args: tuple[bool | None, bool | None, bool | None], expected: dict[str, bool]) -> None:
    assert check_flags(*args) == expected


def test_check_flags_none_asked() -> None:
    refused(lambda: check_flags(None, None, None), "invalid_input", "No flag was asked for", "seen, flagged")


@pytest.mark.parametrize(("name", "flag"), [("seen", "\\Seen"), ("flagged", "\\Flagged"), ("answered", "\\Answered")])
def test_imap_flag(name: str, flag: str) -> None:
    assert name in ALLOWED_FLAGS
    assert imap_flag(name) == flag


@pytest.mark.parametrize("name", ["deleted", "draft", "Seen", "\\Seen", ""])
def test_imap_flag_closed_set(name: str) -> None:
    refused(lambda: imap_flag(name), "invalid_input", "only seen, flagged, answered")
