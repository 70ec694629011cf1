"""Quirk knobs: the places where Gmail's behaviour is unknown or configurable, as switches."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

# Special-use attribute -> folder path, as an English Gmail account shows them.
ENGLISH_FOLDERS: dict[str, str] = {
    "\\All": "[Gmail]/All Mail",
    "\\Drafts": "[Gmail]/Drafts",
    "\\Important": "[Gmail]/Important",
    "\\Sent": "[Gmail]/Sent Mail",
    "\\Junk": "[Gmail]/Spam",
    "\\Flagged": "[Gmail]/Starred",
    "\\Trash": "[Gmail]/Trash",
}

# A localised account (German "Google Mail"), to catch clients that look folders up by name.
GERMAN_FOLDERS: dict[str, str] = {
    "\\All": "[Google Mail]/Alle Nachrichten",
    "\\Drafts": "[Google Mail]/Entwürfe",
    "\\Important": "[Google Mail]/Wichtig",
    "\\Sent": "[Google Mail]/Gesendet",
    "\\Junk": "[Google Mail]/Spam",
    "\\Flagged": "[Google Mail]/Markiert",
    "\\Trash": "[Google Mail]/Papierkorb",
}


@dataclass
class Knobs:
    # STORE +X-GM-LABELS of a label that does not exist: create it, silently ignore it, or answer NO.
    unknown_label_policy: Literal["create", "ignore", "no"] = "create"
    # X-GM-RAW sees labels, flags and existence only this many seconds after a change. Gmail's web and
    # API search are reported to lag behind new mail; a few seconds is the emulator's realistic default.
    raw_search_lag_s: float = 3.0
    # Whether SEARCH X-GM-LABELS lags like X-GM-RAW (unverified; on, so a pass can meet a stale index).
    label_search_lags: bool = True
    # X-GM-RAW (and SEARCH X-GM-LABELS while `label_search_lags`) answers read, starred, inbox and label
    # state from each message as it arrived, never from a later change: a stale index, as measured on the
    # Gmail API (BEHAVIOURS.md, "Search"). Off: Gmail's index catches up (after `raw_search_lag_s`).
    raw_search_stale_state: bool = False
    # Time from SMTP 250 until the copy appears in Sent Mail; None = never filed. Undocumented; reports
    # range from "seconds" to about ten, so the default sits in between.
    sent_filing_delay_s: float | None = 3.0
    # Gmail's "similar message" rule (same Message-ID and Date): filing skipped when a similar copy is in
    # Sent, and an APPEND replaces a similar copy. Reported once (WildDuck's notes), contradicted since.
    merge_similar_sent: bool = False
    # Whether a message that joins a thread on arrival gets the user labels every earlier message of
    # the thread carries (the conversation's labels). Not documented for IMAP (BEHAVIOURS.md, "Labels on
    # a later reply"); off keeps labels per message, as IMAP shows them.
    thread_labels_on_replies: bool = False
    # Threading on arrival needs a matching subject (Re:/Fwd: prefixes aside) as well as references.
    thread_by_subject: bool = True
    # Where a header without its blank line ends (BEHAVIOURS.md, "Broken MIME"): at the first empty
    # line whatever comes before it ("blank_line"), or also at the first line that is neither a
    # field nor a continuation, which then starts the body ("non_field"). Read when a message is
    # stored.
    header_end: Literal["blank_line", "non_field"] = "non_field"
    # How BODYSTRUCTURE gives a parameter value holding 8-bit bytes (a raw UTF-8 file name, perhaps cut
    # inside a character): as sent ("as_sent"), or decoded as UTF-8 with U+FFFD for what is not and
    # sent as UTF-8 ("utf8_replaced"). Not on record for Gmail either way (BEHAVIOURS.md).
    param_8bit: Literal["as_sent", "utf8_replaced"] = "as_sent"
    # Whether X-GM-RAW run inside the Trash folder finds the messages there without `in:trash`.
    raw_search_in_trash: bool = True
    # Whether a message moved to Trash keeps its user labels and \\Inbox (False: they are dropped, as
    # Gmail's All Mail view shows a trashed message with none; restoring it does not bring them back).
    trash_keeps_labels: bool = False
    # Whether COPY/MOVE into All Mail from another folder (Trash) is refused (NO) instead of taking the
    # message out of Trash into All Mail; Gmail's documentation says neither.
    all_mail_refuses_moves: bool = False
    # Longest command line accepted (bytes, literals not counted); longer ones get BAD. None = no limit.
    max_line_length: int | None = None
    # The timezone whose calendar days SEARCH SINCE/BEFORE/ON compare INTERNALDATE against (an IANA name).
    # Google documents date-only search values as midnight Pacific; it may be the account's own zone.
    date_search_timezone: str = "America/Los_Angeles"
    # How long the final answer to SMTP DATA takes, as on a slow upload: this many seconds plus the
    # message's size divided by `smtp_upload_bytes_per_s` (None: no line limit). The message is
    # accepted only when the time is up, so a client that gives up earlier never sent it.
    smtp_data_delay_s: float = 0.0
    smtp_upload_bytes_per_s: float | None = None
    # How Gmail's side ends an SMTP session it closes (after 221 to QUIT, or a 421): "tls" answers the
    # client's TLS goodbye (close_notify) and closes; "tcp" closes the connection without one;
    # "silent" reads and sends nothing more, as a path that drops packets (BEHAVIOURS.md, "SMTP").
    smtp_goodbye: Literal["tls", "tcp", "silent"] = "tls"
    # Local delivery into a recipient's INBOX.
    delivery_delay_s: float = 0.0
    auto_expunge: bool = True
    expunge_behavior: Literal["archive", "trash", "delete"] = "archive"
    draft_flag_visible: bool = False
    folder_names: dict[str, str] = field(default_factory=lambda: dict(ENGLISH_FOLDERS))
    max_connections: int = 15
    allow_utf8_accept: bool = False
    literal_minus_max: int = 4096
    # STORE accepted but not applied: a random fraction of messages, and/or the listed Message-IDs
    # (bare, without brackets); each listed id misbehaves once, so a repeat call succeeds.
    store_not_applied_fraction: float = 0.0
    store_not_applied_ids: set[str] = field(default_factory=set)
    # Gmail reports only EXISTS/EXPUNGE during IDLE; flag updates only when this is on.
    idle_notify_flags: bool = False
    # IDLE still advertised but answered NO (a proxy or a policy in between; Gmail itself allows it).
    idle_refused: bool = False
    # What ends one IDLE command that lasts this many seconds (timed from its `+ idling`; None = never).
    # Gmail is reported to drop idle connections after about ten minutes, sometimes without a BYE
    # (close the socket); to end long sessions with `* BYE Session expired, please login again.`; and
    # a connection can go dead with the socket still open (a stuck NAT or proxy: nothing answers).
    idle_drop_after_s: float | None = 600.0
    idle_bye_after_s: float | None = None
    idle_blackhole_after_s: float | None = None

    def __post_init__(self) -> None:
        _check_zone(self.date_search_timezone)  # a misspelt zone fails here, not in the middle of a SEARCH

    def update(self, **changes: object) -> None:
        for name, value in changes.items():
            if not hasattr(self, name):
                raise AttributeError(f"unknown knob {name!r}")
            if name == "date_search_timezone":
                _check_zone(str(value))
            setattr(self, name, value)

    def search_zone(self) -> ZoneInfo:
        return search_zone(self.date_search_timezone)


@lru_cache(maxsize=32)
def search_zone(name: str) -> ZoneInfo:
    """The zone for SINCE/BEFORE/ON; ValueError for a name the timezone database does not know."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown IANA timezone {name!r}") from error


def _check_zone(name: str) -> None:
    try:
        search_zone(name)
    except ValueError as error:
        raise ValueError(f"date_search_timezone: {error}") from None
