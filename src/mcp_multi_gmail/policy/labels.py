"""Labels, flags and sweeps: which label a tool may set on a message or a thread, which flags exist,
and what one mg_sweep may change and on how many messages."""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import MailError
from ..headers import is_header_breaking, show
from .common import _quoted_list

ALLOWED_FLAGS = ("seen", "flagged", "answered")
_IMAP_FLAGS = {"seen": "\\Seen", "flagged": "\\Flagged", "answered": "\\Answered"}


def _label_key(label: str) -> str:
    # NFC (not NFKC) so the same letters typed as decomposed sequences match, while a
    # look-alike from another script or a compatibility form stays a different label.
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", label.strip()).lower())


def _checked_label(label: str) -> str:
    """Shared input checks of both label tools; returns the trimmed label."""
    if any(is_header_breaking(ch) for ch in label):
        raise MailError("invalid_input", f'The label "{show(label)}" contains a line break or control character.')
    trimmed = label.strip()
    if not trimmed:
        raise MailError("invalid_input", "An empty label name cannot be applied or removed.")
    if trimmed.startswith("\\"):
        raise MailError(
            "label_forbidden",
            f'"{show(trimmed)}" is one of Gmail\'s own labels (they start with a backslash). Changing '
            "them means archiving, starring or deleting, which these label tools do not do. "
            "Nothing was changed.",
        )
    return trimmed


def _not_configured(account: str, label: str, where: str, takes: Sequence[str]) -> MailError:
    listed = _quoted_list(takes) if takes else "(none configured)"
    return MailError(
        "label_forbidden",
        f'The label "{show(label)}" is not configured for mailbox "{account}", so it was neither '
        f"applied nor removed. On {where} these tools take only: {listed}. Every other label is the "
        "user's own. A new classification is added to classification_labels in the configuration, "
        "followed by mg_reload_config.",
    )


def check_message_label(
    account: str, label: str, processed_label: str | None, classifications: Mapping[str, str]
) -> str:
    """The label for mg_(un)label_message: only the processed label. Returns its configured spelling."""
    trimmed = _checked_label(label)
    key = _label_key(trimmed)
    if processed_label is not None and key == _label_key(processed_label):
        return processed_label
    if any(key == _label_key(name) for name in classifications):
        raise MailError(
            "label_forbidden",
            f'"{show(trimmed)}" is a classification of mailbox "{account}". Classifications belong on '
            "the whole thread (mg_label_thread / mg_unlabel_thread); on a single message Gmail, which "
            "lists threads, would not show it. Nothing was changed.",
        )
    raise _not_configured(account, trimmed, "a message", [processed_label] if processed_label else [])


def check_thread_label(
    account: str, label: str, processed_label: str | None, classifications: Mapping[str, str]
) -> str:
    """The label for mg_(un)label_thread: only a classification. Returns its configured spelling."""
    trimmed = _checked_label(label)
    key = _label_key(trimmed)
    for name in classifications:
        if key == _label_key(name):
            return name
    if processed_label is not None and key == _label_key(processed_label):
        raise MailError(
            "label_forbidden",
            f'"{show(trimmed)}" is the processed label of mailbox "{account}"; it goes on individual '
            "messages (mg_label_message / mg_unlabel_message), never on a thread. Gmail puts a "
            "thread's labels on replies that arrive later too, so tomorrow's reply would look "
            "already processed and never come up. Nothing was changed.",
        )
    raise _not_configured(account, trimmed, "a thread", list(classifications))


def check_flags(seen: bool | None, flagged: bool | None, answered: bool | None) -> dict[str, bool]:
    """The requested flag states; only the closed set seen / flagged / answered exists."""
    wanted = {
        name: value
        for name, value in (("seen", seen), ("flagged", flagged), ("answered", answered))
        if value is not None
    }
    if not wanted:
        raise MailError("invalid_input", "No flag was asked for. Pass at least one of seen, flagged or answered.")
    return wanted


def imap_flag(name: str) -> str:
    """The IMAP system flag for one of ALLOWED_FLAGS."""
    try:
        return _IMAP_FLAGS[name]
    except KeyError:
        raise MailError(
            "invalid_input", f'Unknown flag "{show(name)}"; only {", ".join(ALLOWED_FLAGS)} can be set.'
        ) from None


SWEEP_FLAGS = ("seen", "flagged")
_SWEEP_KEYS = ("add_label", "remove_label", *SWEEP_FLAGS)


@dataclass(frozen=True)
class SweepChange:
    """What one mg_sweep writes: one label or one flag, on or off, on messages or on whole threads."""

    attribute: str  # "label" or "flag"
    name: str  # the label as configured, or the IMAP flag (\\Seen, \\Flagged)
    on: bool  # True: added / set; False: removed / cleared
    on_threads: bool  # a classification: every message of each matched thread, like mg_label_thread
    # Other classifications an added classification takes off those messages (mg_label_thread's rule).
    replaces: tuple[str, ...] = ()


def check_sweep_change(
    account: str, change: Mapping[str, object], processed_label: str | None, classifications: Mapping[str, str]
) -> SweepChange:
    """The change of a sweep: exactly one of add_label / remove_label (the processed label on messages,
    a classification on threads), seen or flagged. Never a system label, a user's label, archiving or trash."""
    given = [key for key in change if change[key] is not None]
    unknown = [key for key in given if key not in _SWEEP_KEYS]
    if unknown:
        raise MailError(
            "invalid_input",
            f"A sweep cannot change {_quoted_list(unknown)}; `change` takes exactly one of "
            f"{', '.join(_SWEEP_KEYS)}. A sweep never archives or trashes. Nothing was changed.",
        )
    if len(given) != 1:
        raise MailError(
            "invalid_input",
            f"`change` must hold exactly one of {', '.join(_SWEEP_KEYS)}, not {len(given)}; sweep once per "
            "change. Nothing was changed.",
        )
    [key] = given
    value = change[key]
    if key in SWEEP_FLAGS:
        if not isinstance(value, bool):
            raise MailError("invalid_input", f"`{key}` takes true or false. Nothing was changed.")
        return SweepChange("flag", _IMAP_FLAGS[key], value, on_threads=False)
    if not isinstance(value, str):
        raise MailError("invalid_input", f"`{key}` takes a label name. Nothing was changed.")
    trimmed = _checked_label(value)
    wanted = _label_key(trimmed)
    if processed_label is not None and wanted == _label_key(processed_label):
        return SweepChange("label", processed_label, key == "add_label", on_threads=False)
    for name in classifications:
        if wanted == _label_key(name):
            others = tuple(c for c in classifications if c != name) if key == "add_label" else ()
            return SweepChange("label", name, key == "add_label", on_threads=True, replaces=others)
    takes = [processed_label] if processed_label else []
    raise _not_configured(account, trimmed, "a sweep", [*takes, *classifications])


def check_sweep_size(account: str, matched: int, limit: int, *, threads: bool) -> None:
    """A sweep covers at most `limit` messages (the mailbox's sweep_limit); more is refused whole."""
    if matched <= limit:
        return
    what = "messages in the matched threads" if threads else "messages"
    raise MailError(
        "query_too_broad",
        f'The sweep would cover {matched} {what} in mailbox "{account}", more than its sweep_limit of {limit}. '
        "Nothing was changed. Narrow the query and sweep the parts one after the other: a date range "
        "(after:2026/01/01 before:2026/04/01), a sender (from:), or leave out what is done already "
        "(-label:NAME, is:unread). The limit is the user's setting, not something to propose raising.",
    )
