"""The one place every write permission is decided.

Sending, recipients, sender aliases, outgoing attachments, labels, flags, the size limit and
unsubscribing are all checked here and nowhere else. The functions are pure (apart from `realpath`/`stat`
for attachments) and take the configured values as plain parameters. Every refusal raises
`MailError` with an English message that says what is allowed, and never suggests that the
assistant widen a permission: that is the user's decision alone.
"""

from __future__ import annotations

import math
import os
import stat
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.parse.listheaders import LIST_UNSUBSCRIBE, LIST_UNSUBSCRIBE_POST, ListFacts, mailto
from mcp_multi_gmail.headers import address_problem, is_header_breaking, show
from mcp_multi_gmail.headers import check_header_value as check_header_value  # re-exported for callers

MAX_MESSAGE_MB = 25  # MiB, as Gmail counts them
MAX_MESSAGE_BYTES = MAX_MESSAGE_MB * 1024 * 1024
# Upper bounds on the lists a tool takes: a message with more recipients, references or files than
# this is no real message, only a flood (and an error listing 10 000 addresses is unreadable).
# smtp.gmail.com takes at most 100 recipients a message (Google Workspace help, "Gmail sending limits
# in Google Workspace", https://support.google.com/a/answer/166852); past that Gmail refuses mid-send,
# after some recipients were accepted, so the bound is checked before anything is sent.
MAX_RECIPIENTS = 100
MAX_REFERENCES = 500
MAX_ATTACHMENTS = 100
ALLOWED_FLAGS = ("seen", "flagged", "answered")

_IMAP_FLAGS = {"seen": "\\Seen", "flagged": "\\Flagged", "answered": "\\Answered"}

# Kernel pseudo-filesystems: their entries can look like regular files (/proc/self/environ).
_PSEUDO_FS_ROOTS = ("/proc", "/sys", "/dev")

_LIST_LIMIT = 20  # items quoted in one message; the rest are counted


@dataclass(frozen=True)
class AllowedAttachment:
    """A file that may be attached: its resolved real path and the name it is attached under."""

    path: Path
    filename: str


# --- helpers -------------------------------------------------------------------------------


def _quoted_list(items: Sequence[str]) -> str:
    shown = ", ".join(f'"{show(item)}"' for item in items[:_LIST_LIMIT])
    rest = len(items) - _LIST_LIMIT
    return f"{shown} and {rest} more" if rest > 0 else shown


def check_count(what: str, items: Sequence[object], limit: int) -> None:
    """A list argument may hold at most `limit` entries."""
    if len(items) > limit:
        raise MailError(
            "invalid_input",
            f"{len(items)} {what} in one message; at most {limit} are accepted. Nothing was sent or saved.",
        )


def _refuse_bare_str(name: str, value: object) -> None:
    # A str is a Sequence[str] too; iterating it character by character would give nonsense.
    if isinstance(value, str):
        raise TypeError(f"{name} must be a sequence of strings, not a single string")


def _label_key(label: str) -> str:
    # NFC (not NFKC) so the same letters typed as decomposed sequences match, while a
    # look-alike from another script or a compatibility form stays a different label.
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", label.strip()).lower())


# --- sending -------------------------------------------------------------------------------


def check_can_send(account: str, can_send: bool) -> None:
    if not can_send:
        raise MailError(
            "send_forbidden",
            f'Mailbox "{account}" may not send mail: sending is not enabled for it in the '
            "configuration. Nothing was sent. A draft can still be saved with mg_save_draft "
            "for the user to review and send.",
        )


def check_has_to(to: Sequence[str], *, sending: bool) -> None:
    """`to` needs at least one address, as in 1.5.0: a message only to Cc/Bcc has no To header."""
    _refuse_bare_str("to", to)
    if not any(address.strip() for address in to):
        done = "Nothing was sent." if sending else "Nothing was saved."
        raise MailError(
            "invalid_input",
            f"The message needs at least one address in `to`; cc and bcc alone are not enough. {done}",
        )


def check_recipients(account: str, allowed: Sequence[str] | None, recipients: Sequence[str]) -> None:
    """Every to/cc/bcc recipient must be a plain address and, if a list is configured, on it."""
    _refuse_bare_str("recipients", recipients)
    if allowed is not None:
        _refuse_bare_str("allowed", allowed)
    if not recipients:
        raise MailError("send_forbidden", f'The message from mailbox "{account}" has no recipient. Nothing was sent.')
    if len(recipients) > MAX_RECIPIENTS:
        raise MailError(
            "invalid_input",
            f"{len(recipients)} recipients (to, cc and bcc together) in one message; Gmail takes at most "
            f"{MAX_RECIPIENTS}. Nothing was sent or saved. Split the recipients into several messages of at most "
            f"{MAX_RECIPIENTS} each.",
        )

    # Controls are looked for before trimming: the caller may hand the untrimmed value to SMTP.
    malformed = [
        r for r in recipients if any(is_header_breaking(ch) for ch in r) or address_problem(r.strip()) is not None
    ]
    trimmed = [r.strip() for r in recipients]
    if malformed:
        raise MailError(
            "invalid_input",
            f"Not a plain e-mail address: {_quoted_list(malformed)}. Give each recipient as a bare "
            "address such as name@example.com, one address per list entry, without a display name, "
            "angle brackets, quotes, commas, semicolons, brackets or spaces, and with national characters "
            "only after the @. Nothing was sent.",
        )
    if allowed is None:
        return

    entries = {a.strip().lower() for a in allowed}
    # An entry "@d" allows the whole domain d and only it: "x@evil-d" and "x@sub.d" are other
    # domains. A plain address has one @ and a non-empty domain, so an entry of "@" alone
    # allows nobody.
    domains = {e[1:] for e in entries if e.startswith("@")}

    def permitted(address: str) -> bool:
        low = address.lower()
        return low in entries or low.rpartition("@")[2] in domains

    refused = list(dict.fromkeys(r for r in trimmed if not permitted(r)))
    if refused:
        if allowed:
            rule = f"Its allowed_recipients list allows only: {_quoted_list(list(allowed))}."
        else:
            rule = "Its allowed_recipients list is empty, which allows nobody."
        raise MailError(
            "send_forbidden",
            f'Mailbox "{account}" may not write to {_quoted_list(refused)}. {rule} Nothing was sent.',
        )


def resolve_sender(
    account: str,
    account_address: str,
    aliases: Sequence[tuple[str, str | None]],
    from_alias: str | None,
) -> tuple[str, str | None]:
    """The From address and display name: the account itself, or one of its configured aliases."""
    if from_alias is None or not from_alias.strip():
        return account_address, None
    wanted = from_alias.strip().lower()
    if wanted == account_address.strip().lower():
        return account_address, None
    for address, name in aliases:
        if address.strip().lower() == wanted:
            check_header_value("From", address)
            display = name.replace('"', "").strip() if name is not None else ""
            if display:
                check_header_value("From display name", display)
            return address, display or None
    if aliases:
        known = "Its aliases are: " + ", ".join(f"{addr} ({name})" if name else addr for addr, name in aliases)
    else:
        known = f"It has no aliases configured, so it writes only as {account_address}"
    raise MailError(
        "send_forbidden",
        f'Mailbox "{account}" may not write as "{show(from_alias.strip())}". {known}. Nothing was sent.',
    )


# --- attachments ---------------------------------------------------------------------------


def _inside(real: str, directory: str) -> bool:
    # A prefix check alone would let /x/mail-other pass for /x/mail, hence the separator.
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    return real == directory or real.startswith(prefix)


def resolve_attachments(paths: Sequence[str], attachment_dirs: Sequence[Path]) -> list[AllowedAttachment]:
    """Outgoing attachments: absolute paths whose real location lies inside an allowed folder."""
    _refuse_bare_str("paths", paths)
    if not paths:
        return []
    check_count("attachments", paths, MAX_ATTACHMENTS)
    if not attachment_dirs:
        raise MailError(
            "send_forbidden",
            "Attachments are off: no attachment_dirs are configured, and without that list files "
            "may be attached from nowhere. Nothing was attached, sent or saved. Tell the user the "
            "file could not be attached; do not propose enabling attachments.",
        )
    # Config makes the folders absolute; a relative one would depend on the working directory,
    # so it never counts.
    allowed = [os.path.realpath(d) for d in attachment_dirs if os.path.isabs(d)]

    result: list[AllowedAttachment] = []
    for given in paths:
        shown = show(given)
        if any(ch in given for ch in "\x00\r\n"):
            raise MailError("invalid_input", f'The attachment path "{shown}" contains a NUL or line break.')
        if not os.path.isabs(given):
            raise MailError("invalid_input", f'The attachment path "{shown}" is relative; give an absolute path.')
        try:
            real = os.path.realpath(given, strict=True)
        except OSError:  # missing, dangling symlink, symlink loop, no permission
            raise MailError("not_found", f'No readable file at "{shown}". Nothing was attached.') from None

        if not any(_inside(real, d) for d in allowed):
            where = f" (its real path is {show(real)})" if real != os.path.normpath(given) else ""
            raise MailError(
                "send_forbidden",
                f'The file "{shown}"{where} is outside the folders attachments may come from: '
                f"{_quoted_list([str(d) for d in attachment_dirs])}. Nothing was attached, sent or "
                "saved. Which folders are allowed is the user's own decision, not something to "
                "propose changing.",
            )
        if any(_inside(real, root) for root in _PSEUDO_FS_ROOTS):
            raise MailError("invalid_input", f'"{shown}" is a system file, not a file that can be attached.')
        try:
            mode = os.stat(real).st_mode
        except OSError:
            raise MailError("not_found", f'No readable file at "{shown}". Nothing was attached.') from None
        if not stat.S_ISREG(mode):
            raise MailError(
                "invalid_input", f'"{shown}" is not a regular file (a folder or a device); attach files only.'
            )

        filename = os.path.basename(real)
        check_header_value("attachment filename", filename)
        result.append(AllowedAttachment(path=Path(real), filename=filename))
    return result


def check_single_name(attachments: Sequence[AllowedAttachment]) -> None:
    """Outgoing files must have one name only. A hard link has no "real path" elsewhere to resolve:
    the same file may also live outside the allowed folders under another name (a hard link planted
    in an allowed folder would carry it out), so a file with several names is not attached."""
    for item in attachments:
        try:
            names = os.stat(item.path).st_nlink
        except OSError:
            continue  # gone: reading it reports that
        if names > 1:
            raise MailError(
                "send_forbidden",
                f'The file "{show(str(item.path))}" has {names} names (hard links), so it may be a file that lives '
                "outside the folders attachments may come from. Nothing was attached, sent or saved. A file with a "
                "single name, such as a copy, can be attached.",
            )


# --- labels --------------------------------------------------------------------------------


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


# --- flags and size ------------------------------------------------------------------------


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


def check_message_size(size_bytes: int, attachment_count: int) -> None:
    """Gmail refuses messages over 25 MiB; refuse before anything is sent or stored."""
    if size_bytes <= MAX_MESSAGE_BYTES:
        return
    # Rounded up, so a message just over the limit never reads as exactly 25.0 MB.
    size_mb = math.ceil(size_bytes * 10 / (1024 * 1024)) / 10
    note = ""
    if attachment_count > 0:
        note = (
            f", counting its {attachment_count} attachment(s) - encoding makes them about a third "
            "larger than the files on disk"
        )
    raise MailError(
        "send_forbidden",
        f"The assembled message is {size_mb:.1f} MB, over the {MAX_MESSAGE_MB:.1f} MB "
        f"Gmail accepts{note}. Nothing was sent or saved.",
    )


# --- unsubscribing -------------------------------------------------------------------------
# Only by the message's own List-Unsubscribe, and only when a DKIM signature Gmail passed covers it
# (RFC 8058 section 4). `why_not_*`: the first rule broken, in a few words; `check_*` refuse with it.

ONE_CLICK_PORT = 443
OPT_OUT_TEXT = "unsubscribe"  # subject and body of a mailto opt-out whose URL names none
MAX_OPT_OUT_SUBJECT = 998  # one header line (RFC 5322 section 2.1.1)
MAX_OPT_OUT_BODY = 10_000  # list servers read a command or two; more is no opt-out


@dataclass(frozen=True)
class OptOut:
    """The one message a mailto opt-out may send: to this address, with this subject and body."""

    address: str
    subject: str
    body: str


def check_can_unsubscribe(account: str, can_unsubscribe: bool) -> None:
    if not can_unsubscribe:
        raise MailError(
            "unsubscribe_refused",
            f'Mailbox "{account}" may not unsubscribe from lists: can_unsubscribe is not enabled for it in the '
            "configuration. Nothing was contacted and nothing was sent. The user can still leave a list through "
            "the web_link that mg_list_subscriptions shows.",
        )


def _fields_problem(facts: ListFacts) -> str | None:
    count = facts.unsubscribe_fields
    return "no List-Unsubscribe field" if count == 0 else "several List-Unsubscribe fields" if count > 1 else None


def _signing_problem(facts: ListFacts, *, post: bool) -> str | None:
    """Why Gmail's verdict does not vouch for List-Unsubscribe (and, with `post`, for
    List-Unsubscribe-Post too, by the same signature: RFC 8058 section 4), or None."""
    if not facts.gmail_verdict:
        return "no DKIM verdict of Gmail's own (mx.google.com)"
    if "pass" not in facts.dkim_results:
        return f"DKIM did not pass (dkim={facts.dkim_results[0]})" if facts.dkim_results else "no DKIM result"
    if not facts.matched:
        return "no DKIM-Signature field matches Gmail's passing result"
    if facts.signed_by(LIST_UNSUBSCRIBE) is None:
        return "the passing DKIM signature does not cover List-Unsubscribe"
    if post and facts.signed_by(LIST_UNSUBSCRIBE, LIST_UNSUBSCRIBE_POST) is None:
        return "the passing DKIM signature does not cover List-Unsubscribe-Post"
    return None


def _url_problem(url: str) -> str | None:
    if any(ch.isspace() or not ch.isprintable() for ch in url):
        return "the URL holds spaces or control characters"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the URL cannot be read"
    if "@" in parts.netloc:
        return "the URL carries a user name or password"
    if port is not None and port != ONE_CLICK_PORT:
        return f"the URL names port {port}, not {ONE_CLICK_PORT}"
    if not parts.hostname:
        return "the URL names no host"
    return None


def why_not_one_click(facts: ListFacts) -> str | None:
    """The first rule of RFC 8058 one-click that the message breaks, or None when it may be used."""
    if (problem := _fields_problem(facts)) is not None:
        return problem
    url = facts.first("https")
    if url is None:
        return "only an http: URI, not https:" if facts.first("http") else "no https: URI in List-Unsubscribe"
    if facts.post_fields == 0:
        return "no List-Unsubscribe-Post field"
    if not facts.one_click_post:
        return "List-Unsubscribe-Post does not say List-Unsubscribe=One-Click"
    return _url_problem(url) or _signing_problem(facts, post=True)


def check_one_click(account: str, facts: ListFacts) -> str:
    """The https URL a one-click POST may go to; refuses with the rule the message breaks."""
    problem = why_not_one_click(facts)
    url = facts.first("https")
    if problem is not None or url is None:
        raise MailError(
            "unsubscribe_refused",
            f'One-click unsubscribe from this list of mailbox "{account}" is refused: {problem}. Nothing was '
            "contacted. RFC 8058 allows it only for a signed header that offers it; mg_list_subscriptions shows "
            "the other ways out (mailto, web_link).",
        )
    return url


def _opt_out_problem(facts: ListFacts) -> str | None:
    uri = facts.first("mailto")
    parsed = mailto(uri) if uri is not None else None
    if parsed is None:
        return "no mailto: URI in List-Unsubscribe"
    if not parsed.addresses:
        return "the mailto: URL names no address"
    if len(parsed.addresses) > 1 or parsed.cc_or_bcc:
        return "the mailto: URL names more than one recipient"
    problem = address_problem(parsed.addresses[0])
    if problem is not None:
        return f"the mailto: address {problem}"
    if not _fits(parsed.subject, MAX_OPT_OUT_SUBJECT, ()):
        return "the mailto: subject is not one short header line"
    if not _fits(parsed.body, MAX_OPT_OUT_BODY, ("\r", "\n")):  # a body may have lines
        return "the mailto: body holds control characters or is too long"
    # A signature vouches for the text, not for whose the address is (a hostile sender may sign a
    # mailto to anyone): only to a signer's own domain, or below it. Unsigned: _signing_problem says so.
    signers = sorted(facts.signers(LIST_UNSUBSCRIBE))
    domain = parsed.addresses[0].strip().rpartition("@")[2].lower()
    if signers and not any(domain == d or domain.endswith("." + d) for d in signers):
        return f"the mailto: address is outside the domain that signed the header ({', '.join(signers)})"
    return None


def _fits(text: str | None, limit: int, allowed: tuple[str, ...]) -> bool:
    """A field the URL names (or leaves out): at most `limit` characters, no control character but `allowed`."""
    return text is None or (len(text) <= limit and not any(is_header_breaking(ch) and ch not in allowed for ch in text))


def why_not_mailto(facts: ListFacts) -> str | None:
    """The first rule a mailto opt-out from this message breaks, or None when it may be sent."""
    return _fields_problem(facts) or _opt_out_problem(facts) or _signing_problem(facts, post=False)


def check_mailto(account: str, facts: ListFacts) -> OptOut:
    """The one opt-out the signed header asks for: its address, its URL's own subject and body ("unsubscribe"
    for what it leaves out). can_send and allowed_recipients play no part, and it widens neither."""
    problem = why_not_mailto(facts)
    uri = facts.first("mailto")
    parsed = mailto(uri) if uri is not None else None
    if problem is not None or parsed is None:
        raise MailError(
            "unsubscribe_refused",
            f'The mailto opt-out from this list of mailbox "{account}" is refused: {problem}. Nothing was sent. '
            "mg_list_subscriptions shows the other ways out (one_click, web_link).",
        )
    subject = parsed.subject if parsed.subject and parsed.subject.strip() else OPT_OUT_TEXT
    body = parsed.body if parsed.body and parsed.body.strip() else OPT_OUT_TEXT
    return OptOut(parsed.addresses[0].strip(), subject, body)


# --- sweeps --------------------------------------------------------------------------------

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
