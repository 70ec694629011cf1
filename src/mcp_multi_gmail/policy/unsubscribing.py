"""Unsubscribing: may this mailbox leave lists, and may it leave this one by one-click or by mailto.

Only by the message's own List-Unsubscribe, and only when a DKIM signature Gmail passed covers it
(RFC 8058 section 4). `why_not_*`: the first rule broken, in a few words; `check_*` refuse with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from ..errors import MailError
from ..gmail.parse.listheaders import LIST_UNSUBSCRIBE, LIST_UNSUBSCRIBE_POST, ListFacts, mailto
from ..gmail.special_addresses import refusal
from ..gmail.web import MAX_URL_LENGTH, OneClickTarget, is_host_name, literal_address
from ..headers import address_problem, is_header_breaking

ONE_CLICK_PORT = 443
OPT_OUT_TEXT = "unsubscribe"  # subject and body of a mailto opt-out whose URL names none
MAX_OPT_OUT_SUBJECT = 998  # one header line (RFC 5322 section 2.1.1)
MAX_OPT_OUT_BODY = 10_000  # list servers read a command or two; more is no opt-out
# RFC 3986's characters only: no space, no control, no backslash (which some parsers read as '/'), no non-ASCII.
_URL_CHARS = re.compile(r"[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+")


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


def one_click_target(url: str) -> OneClickTarget | str:
    """What a one-click POST to `url` would ask for, or the first rule the URL breaks: the one rule for
    a URL, by which mg_list_subscriptions shows `one_click` and mg_unsubscribe decides (a dry run too).

    It looks up no host name, as the overview cannot: the addresses a name resolves to are checked
    when the request is made (gmail/web.py), and a refusal there says so. The address an IP literal
    writes is checked here, with the same table (gmail/special_addresses.py)."""
    if len(url) > MAX_URL_LENGTH:
        return f"the URL is {len(url)} characters long, over {MAX_URL_LENGTH}"
    if _URL_CHARS.fullmatch(url) is None:
        return "the URL holds characters a URL cannot (RFC 3986): a space, a control, a backslash or non-ASCII text"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return "the URL cannot be read"
    if parts.scheme != "https":
        return f"the URL's scheme is {parts.scheme or 'missing'}, not https"
    if "@" in parts.netloc:
        return "the URL carries a user name or password"
    if port is not None and port != ONE_CLICK_PORT:
        return f"the URL names port {port}, not {ONE_CLICK_PORT}"
    host = parts.hostname or ""  # urlsplit gives it in lower case
    if not host:
        return "the URL names no host"
    literal = literal_address(host)
    if literal is None and ("[" in parts.netloc or not is_host_name(host)):
        return f"the URL's host {host} is not a host name or an IP address"
    if literal is not None and (why := refusal(literal)) is not None:
        return f"the URL's host is the address {literal}, {why}"
    return OneClickTarget(host, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""), literal)


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
    target = one_click_target(url)
    return target if isinstance(target, str) else _signing_problem(facts, post=True)


def check_one_click(account: str, facts: ListFacts) -> OneClickTarget:
    """What a one-click POST may go to; refuses with the rule the message breaks."""
    problem = why_not_one_click(facts)
    target = one_click_target(facts.first("https") or "")
    if problem is not None or isinstance(target, str):
        raise MailError(
            "unsubscribe_refused",
            f'One-click unsubscribe from this list of mailbox "{account}" is refused: {problem}. Nothing was '
            "contacted. RFC 8058 allows it only for a signed header that offers it; mg_list_subscriptions shows "
            "the other ways out (mailto, web_link).",
        )
    return target


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
