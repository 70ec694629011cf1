"""`mcp-multi-gmail probe`: measure, on a real account, the Gmail behaviours this project could
only assume, and say which emulator knob values match.

Read-only unless asked: EXAMINE only, BODY.PEEK only; no STORE, no APPEND, no SMTP. With
`write_test` it saves one reply draft and deletes it again, to see whether it joins the thread.
Every question is answered from the account's own mail; where the mail gives no evidence (an
empty Trash, no nested label), the answer is "not measured", never a guess.
"""

from __future__ import annotations

import contextlib
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

from ..config import SignIn
from ..errors import MailError
from ..statefile import utc_stamp
from .endpoint import Endpoint
from .imap import ALL_MAIL, DRAFTS, TRASH, ImapSession
from .imap.failures import connection_broke, gmail_reason, network_error
from .imap.login import connect, log_out, login_refusal
from .parse.envelope import envelope_info

# Zones tried for the SINCE day boundary, most likely first: Google documents Pacific midnight;
# UTC is what RFC 3501 readers expect; the rest cover the account's own zone in most of the world.
CANDIDATE_ZONES = (
    "America/Los_Angeles",
    "UTC",
    "Europe/Prague",
    "Europe/London",
    "Europe/Berlin",
    "Europe/Moscow",
    "America/New_York",
    "America/Chicago",
    "America/Denver",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Asia/Shanghai",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
    "Pacific/Kiritimati",
)
DAYS_MEASURED = 14
MAX_MESSAGES = 5000  # INTERNALDATEs read for the day-boundary question
ENVELOPE_SAMPLE = 50
LABELS_TRIED = 12
_SYSTEM_PREFIXES = ("[Gmail]", "[Google Mail]")


@dataclass
class DayBoundary:
    """One calendar day D: SINCE D left out everything up to `excluded` and kept everything from
    `included` on, so Gmail's midnight of D lies in (excluded, included]."""

    day: date
    excluded: datetime
    included: datetime


@dataclass
class LabelCheck:
    label: str
    nested: bool
    folder_count: int  # messages the label's own folder shows (not from SEARCH)
    exact: int  # SEARCH X-GM-LABELS "<label>"
    other_case: int  # SEARCH X-GM-LABELS "<LABEL with its letter case swapped>"


@dataclass
class DraftTest:
    subject_changed: bool
    joined_thread: bool
    deleted: bool
    detail: str = ""


@dataclass
class ProbeReport:
    account: str
    login_error: MailError | None = None
    capabilities_before: list[str] = field(default_factory=list)
    capabilities_after: list[str] = field(default_factory=list)
    folders: list[tuple[str, str | None]] = field(default_factory=list)  # (path, special-use flag)
    boundaries: list[DayBoundary] = field(default_factory=list)
    zones: list[str] = field(default_factory=list)  # candidate zones consistent with every boundary
    labels: list[LabelCheck] = field(default_factory=list)
    trash_count: int = 0
    raw_finds_in_trash: bool | None = None
    envelope_checked: int = 0
    envelope_differs: list[tuple[str, str]] = field(default_factory=list)  # (envelope id, header id)
    draft: DraftTest | None = None
    notes: list[str] = field(default_factory=list)

    # ------------------------------------------------------------------ conclusions

    @property
    def date_zone(self) -> str | None:
        """The zone SINCE uses, when the mail near midnight tells them apart."""
        if not self.boundaries or not self.zones or len(self.zones) == len(CANDIDATE_ZONES):
            return None
        return self.zones[0]

    @property
    def labels_case_insensitive(self) -> bool | None:
        tried = [c for c in self.labels if c.exact > 0 and c.label.swapcase() != c.label]
        return all(c.other_case == c.exact for c in tried) if tried else None

    @property
    def nested_labels_found(self) -> bool | None:
        nested = [c for c in self.labels if c.nested and c.folder_count > 0]
        return all(c.exact > 0 for c in nested) if nested else None

    @property
    def envelope_ids_match(self) -> bool | None:
        return not self.envelope_differs if self.envelope_checked else None

    def knobs(self) -> dict[str, Any]:
        """Emulator knob values that match what was seen (a knob without evidence is left out)."""
        knobs: dict[str, Any] = {}
        if self.date_zone is not None:
            knobs["date_search_timezone"] = self.date_zone
        specials = {flag: path for path, flag in self.folders if flag is not None}
        if specials:
            knobs["folder_names"] = specials
        if self.raw_finds_in_trash is not None:
            knobs["raw_search_in_trash"] = self.raw_finds_in_trash
        if self.draft is not None and self.draft.deleted:
            # The draft's subject differs from the thread's on purpose: it joins only if Gmail threads
            # on the references alone.
            knobs["thread_by_subject"] = not self.draft.joined_thread
        return knobs

    def lines(self) -> list[str]:
        out = [f"mcp-multi-gmail probe: mailbox {self.account}"]
        if self.login_error is not None:
            out.append(f"login refused: {self.login_error.code} (retryable: {self.login_error.retryable})")
            out.append(f"  {self.login_error.message}")
        out.append(f"capabilities before login: {' '.join(self.capabilities_before) or '-'}")
        out.append(f"capabilities after login:  {' '.join(self.capabilities_after) or '-'}")
        if self.folders:
            out.append("special-use folders:")
            out += [f"  {flag:<10} {path}" for path, flag in self.folders if flag is not None]
        out.append("SINCE day boundary:")
        if not self.boundaries:
            out.append("  not measured: too little mail in the last two weeks")
        for b in self.boundaries:
            # Midnight of D in a zone is D 00:00 UTC minus the zone's offset, so the cut bounds the offset.
            utc_midnight = datetime.combine(b.day, time.min, UTC)
            low, high = _offset(utc_midnight - b.included), _offset(utc_midnight - b.excluded)
            out.append(
                f"  SINCE {b.day.isoformat()}: midnight between {_iso(b.excluded)} and {_iso(b.included)} "
                f"(UTC offset from {low} to {high})"
            )
        if self.boundaries:
            zone = self.date_zone
            fits = ", ".join(self.zones) if self.zones else "none of the candidate zones"
            out.append(f"  zones that fit: {fits}" if zone else f"  not decided (fits: {fits})")
        out.append("SEARCH X-GM-LABELS:")
        if not self.labels:
            out.append("  not measured: no user label with messages")
        for c in self.labels:
            kind = "nested" if c.nested else "flat"
            out.append(
                f"  {kind} label {c.label!r}: folder shows {c.folder_count}, search finds {c.exact}, "
                f"other letter case finds {c.other_case}"
            )
        out.append(f"  case-insensitive: {_yes_no(self.labels_case_insensitive)}")
        out.append(f"  nested A/B labels found: {_yes_no(self.nested_labels_found)}")
        if self.trash_count == 0:
            out.append("X-GM-RAW inside Trash: not measured (Trash is empty)")
        else:
            out.append(f"X-GM-RAW inside Trash finds a trashed message: {_yes_no(self.raw_finds_in_trash)}")
        out.append(
            f"ENVELOPE Message-ID equals the header's: {_yes_no(self.envelope_ids_match)} "
            f"({self.envelope_checked} checked, {len(self.envelope_differs)} differ)"
        )
        out += [f"  envelope {env!r} / header {head!r}" for env, head in self.envelope_differs[:3]]
        if self.draft is not None:
            d = self.draft
            out.append(
                f"reply draft (subject changed: {_yes_no(d.subject_changed)}) joined the thread: "
                f"{_yes_no(d.joined_thread)}; deleted again: {_yes_no(d.deleted)} {d.detail}".rstrip()
            )
        out += [f"note: {note}" for note in self.notes]
        return out


def _iso(moment: datetime) -> str:
    return utc_stamp(moment)


def _offset(delta: timedelta) -> str:
    minutes = round(delta.total_seconds() / 60)
    sign = "-" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"{sign}{hours:02d}:{rest:02d}" if hours < 48 else f"{sign}more than two days"


def _yes_no(value: bool | None) -> str:
    return "not measured" if value is None else ("yes" if value else "no")


def _caps(raw: tuple[bytes | str, ...] | None) -> list[str]:
    """In Gmail's own order: the order is part of what a transcript shows."""
    return [c.decode() if isinstance(c, bytes) else str(c) for c in (raw or ())]


def _zone(name: str) -> ZoneInfo | None:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


# ------------------------------------------------------------------ the questions


def measure_day_boundary(session: ImapSession, today: date) -> tuple[list[DayBoundary], list[str]]:
    """Compare SEARCH SINCE D with the INTERNALDATEs around each of the last two weeks' midnights."""
    session.open(ALL_MAIL)
    first = today - timedelta(days=DAYS_MEASURED + 1)
    uids = session.search(["SINCE", first])[-MAX_MESSAGES:]
    dates = {uid: item.internaldate for uid, item in session.fetch(uids, ["INTERNALDATE"]).items()}
    known = {uid: when for uid, when in dates.items() if when is not None}
    boundaries: list[DayBoundary] = []
    for back in range(DAYS_MEASURED - 1, 0, -1):
        day = today - timedelta(days=back)
        found = set(session.search(["SINCE", day])) & known.keys()
        left = known.keys() - found
        if not found or not left:
            continue
        excluded = max(known[uid] for uid in left)
        included = min(known[uid] for uid in found)
        if excluded < included:  # otherwise SINCE did not cut by time at all (index lag, odd dates)
            boundaries.append(DayBoundary(day, excluded, included))
    zones = []
    for name in CANDIDATE_ZONES:
        zone = _zone(name)
        if zone is None:
            continue  # no timezone database on this machine (Windows without tzdata): offsets only
        if all(b.excluded < datetime.combine(b.day, time.min, zone) <= b.included for b in boundaries):
            zones.append(name)
    return boundaries, zones


def measure_labels(session: ImapSession, folders: list[tuple[str, str | None, bool]]) -> list[LabelCheck]:
    """For a few user labels: their folder's own count against SEARCH X-GM-LABELS in All Mail, in the
    label's spelling and with its letter case swapped."""
    candidates = [
        path
        for path, special, selectable in folders
        if special is None and selectable and path.upper() != "INBOX" and not path.startswith(_SYSTEM_PREFIXES)
    ]
    # Nested labels first (the rarer evidence), then labels whose case can be swapped.
    candidates.sort(key=lambda p: ("/" not in p, p.swapcase() == p))
    checks: list[LabelCheck] = []
    have_flat = have_nested = False
    for path in candidates[:LABELS_TRIED]:
        nested = "/" in path
        if (nested and have_nested) or (not nested and have_flat):
            continue
        count = session.examine(path)
        if count == 0:
            continue
        session.open(ALL_MAIL)
        exact = len(session.search(["X-GM-LABELS", path]))
        other = len(session.search(["X-GM-LABELS", path.swapcase()])) if path.swapcase() != path else exact
        checks.append(LabelCheck(path, nested, count, exact, other))
        have_nested |= nested
        have_flat |= not nested
        if have_flat and have_nested:
            break
    return checks


def measure_trash(session: ImapSession) -> tuple[int, bool | None]:
    """Whether X-GM-RAW run inside Trash finds the newest trashed message by its Message-ID."""
    session.open(TRASH)
    count = session.exists
    if count == 0:
        return 0, None
    uids = session.search(["ALL"])[-10:]
    for item in sorted(session.fetch(uids, ["ENVELOPE"]).values(), key=lambda i: -i.uid):
        mid = item.envelope.message_id if item.envelope else None
        if mid and '"' not in mid:
            return count, item.uid in session.search_raw(f'rfc822msgid:"{mid}"')
    return count, None


def measure_envelopes(session: ImapSession) -> tuple[int, list[tuple[str, str]]]:
    """ENVELOPE's Message-ID against the Message-ID header itself, for the newest messages."""
    session.open(ALL_MAIL)
    uids = session.search(["ALL"])[-ENVELOPE_SAMPLE:]
    if not uids:
        return 0, []
    answer = session.client.fetch(uids, ["ENVELOPE", "BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)]"])
    differs: list[tuple[str, str]] = []
    checked = 0
    for data in answer.values():
        raw = bytes(data.get(b"BODY[HEADER.FIELDS (MESSAGE-ID)]") or b"")
        header = " ".join(raw.decode("utf-8", "replace").split(":", 1)[-1].split()).strip().strip("<>")
        envelope = envelope_info(data[b"ENVELOPE"]).message_id if b"ENVELOPE" in data else None
        if not header and not envelope:
            continue
        checked += 1
        if (envelope or "") != header:
            differs.append((envelope or "", header))
    return checked, differs


def _header_uid(session: ImapSession, message_id: str) -> int | None:
    uids = session.search(["HEADER", "Message-ID", message_id])
    return max(uids) if uids else None


def draft_test(session: ImapSession, address: str) -> DraftTest:
    """Save one draft that replies to the newest received message, with its subject changed, see
    whether Gmail puts it into that message's thread, then delete it again (Trash, then expunge)."""
    session.open(ALL_MAIL)
    uids = session.search(["NOT", "X-GM-LABELS", "\\Sent", "NOT", "X-GM-LABELS", "\\Draft"])[-20:]
    items = session.fetch(uids, ["ENVELOPE", "X-GM-THRID"])
    original = next(
        (i for i in sorted(items.values(), key=lambda i: -i.uid) if i.envelope and i.envelope.message_id), None
    )
    if original is None or original.envelope is None:
        return DraftTest(subject_changed=True, joined_thread=False, deleted=False, detail="(no message to reply to)")
    parent = original.envelope.message_id
    domain = address.rpartition("@")[2] or "localhost"
    mid = f"probe-{uuid.uuid4().hex}@{domain}"
    draft = EmailMessage()
    draft["From"] = address
    draft["To"] = address
    draft["Subject"] = "mcp-multi-gmail probe (test draft, deleted at once)"
    draft["Date"] = format_datetime(datetime.now(UTC))
    draft["Message-ID"] = f"<{mid}>"
    draft["In-Reply-To"] = f"<{parent}>"
    draft["References"] = f"<{parent}>"
    draft.set_content("A test draft of mcp-multi-gmail probe. It is deleted again straight away.\n")
    session.append(DRAFTS, bytes(draft), ["\\Seen"], None)
    deleted = False
    joined = False
    try:
        session.open(ALL_MAIL)
        uid = _header_uid(session, mid)
        if uid is not None:
            thread = session.fetch([uid], ["X-GM-THRID"]).get(uid)
            joined = thread is not None and thread.thread_id == original.thread_id
    finally:
        deleted = _delete_draft(session, mid)
    return DraftTest(subject_changed=True, joined_thread=joined, deleted=deleted)


def _delete_draft(session: ImapSession, mid: str) -> bool:
    session.open(DRAFTS, writable=True)
    uid = _header_uid(session, mid)
    if uid is not None:
        session.move([uid], TRASH)
    session.open(TRASH, writable=True)
    uid = _header_uid(session, mid)
    if uid is not None:
        session.change_flags([uid], ["\\Deleted"], add=True)
        session.expunge([uid])
    session.open(ALL_MAIL)
    gone = _header_uid(session, mid) is None
    session.open(TRASH)
    return gone and _header_uid(session, mid) is None


# ------------------------------------------------------------------ the run


def run_probe(
    account: str,
    address: str,
    password: str | SignIn,
    endpoint: Endpoint,
    *,
    write_test: bool,
    today: date | None = None,
) -> ProbeReport:
    report = ProbeReport(account=account)
    try:
        client = connect(endpoint, early_capability=True)
    except (OSError, IMAPClientError) as error:
        raise network_error(account, error) from None
    try:
        report.capabilities_before = _caps(client.capabilities())
        # The session's own LOGIN: a refusal is reported, a dropped line (or Gmail's BYE) ends the probe.
        report.login_error = login_refusal(client, account, address, password, endpoint.tls_context())
        if report.login_error is not None:
            return report
        report.capabilities_after = _caps(client.capabilities())
        session = ImapSession(client, account)
        listing = session.all_folders()
        report.folders = [(path, special) for path, special, _selectable in listing]
        report.boundaries, report.zones = measure_day_boundary(session, today or datetime.now(UTC).date())
        report.labels = measure_labels(session, listing)
        report.trash_count, report.raw_finds_in_trash = measure_trash(session)
        report.envelope_checked, report.envelope_differs = measure_envelopes(session)
        if write_test:
            report.draft = draft_test(session, address)
    except IMAPClientAbortError as error:
        raise connection_broke(account, error) from None
    except (TimeoutError, OSError) as error:
        raise network_error(account, error) from None
    except IMAPClientError as error:
        raise MailError("upstream_error", f'Mailbox "{account}": Gmail answered: {gmail_reason(error)}') from None
    finally:
        with contextlib.suppress(Exception):
            log_out(client)
    return report
