"""Gmail's own verdict from Authentication-Results (RFC 8601) and the delivery trace above it."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...domain import Authentication

GMAIL_AUTHSERV_ID = "mx.google.com"
AUTH_RESULTS = frozenset(
    {"pass", "fail", "softfail", "none", "neutral", "temperror", "permerror", "policy", "bestguesspass"}
)
# key=value pairs. The lookbehind and possessive quantifiers keep this linear: without them a
# long run of token characters with no "=" is rescanned from every position (quadratic).
_RESULT_PAIR = re.compile(
    r'(?<![A-Za-z0-9_.\-/])([A-Za-z0-9][A-Za-z0-9_.\-/]*+)\s*+=\s*+("(?:[^"\\]|\\.)*+"|[^\s";]++)'
)
_DOMAIN = re.compile(r"^[a-z0-9](?:[a-z0-9.\-]*[a-z0-9])?$")


def ordered_headers(block: bytes | str) -> list[tuple[str, str]]:
    """(lower-case name, unfolded value) of every header in a raw header block, topmost first."""
    text = block.decode("utf-8", "replace") if isinstance(block, bytes) else str(block)
    found: list[tuple[str, str]] = []
    current: tuple[str, list[str]] | None = None
    for line in re.split(r"\r\n|\n|\r", text):
        if not line.strip():
            if found or current is not None:
                break  # the blank line that ends the header block
            continue
        if line[0] in " \t":
            if current is not None:
                current[1].append(line)
            continue
        if current is not None:
            found.append((current[0], "".join(current[1])))
        header, colon, value = line.partition(":")
        current = (header.strip().lower(), [value]) if colon else None
    if current is not None:
        found.append((current[0], "".join(current[1])))
    return found


def _strip_comments(text: str) -> str:
    """Remove (nested) RFC 5322 comments, which may contain ";" and "=", keeping quoted strings."""
    out: list[str] = []
    depth = 0
    quoted = False
    escaped = False
    for ch in text:
        if escaped:
            escaped = False
            if depth == 0:
                out.append(ch)
        elif ch == "\\":
            escaped = True
            if depth == 0:
                out.append(ch)
        elif quoted:
            out.append(ch)
            quoted = ch != '"'
        elif depth == 0 and ch == '"':
            quoted = True
            out.append(ch)
        elif ch == "(":
            depth += 1
        elif ch == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                out.append(" ")  # a comment separates tokens
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _authserv_id(value: str) -> str | None:
    words = value.split(";", 1)[0].split()
    if len(words) == 1 or (len(words) == 2 and words[1].isascii() and words[1].isdigit()):  # optional version number
        return words[0].strip('"').lower()
    return None


@dataclass(frozen=True)
class _Result:
    method: str
    result: str | None
    props: dict[str, str]


def _results(value: str) -> list[_Result]:
    found: list[_Result] = []
    for segment in value.split(";")[1:]:
        pairs = _RESULT_PAIR.findall(segment)
        if not pairs:
            continue  # "none" (no results) or junk
        method, result = pairs[0]
        token = result.strip('"').lower()
        props = {key.lower(): val.strip('"') for key, val in pairs[1:]}
        found.append(_Result(method.split("/", 1)[0].lower(), token if token in AUTH_RESULTS else None, props))
    return found


def _dkim_domain(result: _Result) -> str | None:
    raw = result.props.get("header.d") or result.props.get("header.i") or ""
    domain = raw.rpartition("@")[2].strip().strip(".").lower()
    return domain if _DOMAIN.match(domain) else None


def _aligned(dkim_domain: str, from_address: str | None) -> bool:
    """Relaxed alignment approximated without a public-suffix list: same domain, or one is a
    parent of the other (a single-label signer such as "com" never counts)."""
    if not from_address or "." not in dkim_domain:
        return False
    from_domain = from_address.rpartition("@")[2].strip().strip(".").lower()
    if not from_domain:
        return False
    return (
        dkim_domain == from_domain or from_domain.endswith("." + dkim_domain) or dkim_domain.endswith("." + from_domain)
    )


_GMAIL_HOP = re.compile(r"\bby\s+mx\.google\.com\b", re.IGNORECASE)
_GMAIL_ARC = re.compile(r"^\s*i\s*=\s*\d+\s*;\s*mx\.google\.com\s*;", re.IGNORECASE)


def _gmail_verdict(block: bytes) -> tuple[str | None, int]:
    """Gmail's own Authentication-Results (comments stripped) and how many others there are.

    On delivery Gmail writes, from the top down: its internal Received lines, ARC headers with
    its ARC-Authentication-Results, Return-Path, the Received line of the final hop ("by
    mx.google.com"), Received-SPF, and then its Authentication-Results; the sender's headers
    follow below. A header that claims to be mx.google.com's verdict counts only with that trace
    above it: without it (mail imported over IMAP, or written by the sender) it is a claim like
    any other. The topmost mx.google.com header is the one Gmail added last.
    """
    final_hop = False
    spf_or_arc = False
    reports = 0
    chosen: str | None = None
    for name, value in ordered_headers(block or b""):
        if name == "received" and _GMAIL_HOP.search(value):
            final_hop = True
        elif name == "received-spf" or (name == "arc-authentication-results" and _GMAIL_ARC.match(value)):
            spf_or_arc = True
        elif name == "authentication-results":
            reports += 1
            plain = _strip_comments(value)
            if chosen is None and final_hop and spf_or_arc and _authserv_id(plain) == GMAIL_AUTHSERV_ID:
                chosen = plain
    return chosen, reports - (1 if chosen is not None else 0)


def authentication(header_block: bytes, from_address: str | None) -> Authentication:
    """Gmail's verdict from the Authentication-Results and trace headers of a message.

    Only an mx.google.com verdict below Gmail's own delivery trace counts (`_gmail_verdict`);
    every other Authentication-Results header is counted in `other_reports` and never read.
    """
    chosen, others = _gmail_verdict(header_block)
    if chosen is None:
        return Authentication(unchecked=True, other_reports=others)
    results = _results(chosen)

    def first(method: str) -> str | None:
        return next((r.result for r in results if r.method == method and r.result), None)

    dkim = [r for r in results if r.method == "dkim"]
    passes = [(r, _dkim_domain(r)) for r in dkim if r.result == "pass"]
    dkim_domain: str | None = None
    dkim_aligned: bool | None = None
    if passes:
        # Several signatures: report the one that speaks for the From domain, if any does.
        aligned = [(r, d) for r, d in passes if d and _aligned(d, from_address)]
        _chosen, dkim_domain = (aligned or passes)[0]
        dkim_aligned = bool(aligned)
    return Authentication(
        spf=first("spf"),
        dkim="pass" if passes else first("dkim"),
        dmarc=first("dmarc"),
        dkim_domain=dkim_domain,
        dkim_aligned=dkim_aligned,
        other_reports=others,
        unchecked=False,
    )


@dataclass(frozen=True)
class DkimResult:
    """One `dkim=` result of Gmail's own verdict: which signature it speaks of (RFC 8601 section 2.7.1).

    Gmail names the signature by `header.i` (the signer's identity, usually "@domain"), `header.s`
    (its selector) and `header.b` (the first characters of its `b=` value)."""

    result: str | None  # pass, fail, …; None for a token no RFC defines
    domain: str | None  # header.d, else the domain of header.i, lower-cased
    selector: str | None  # header.s
    b_prefix: str | None  # header.b


def gmail_dkim_results(header_block: bytes) -> list[DkimResult] | None:
    """Every DKIM result of Gmail's own verdict, in its order; None when Gmail wrote no verdict
    (`_gmail_verdict`: only an mx.google.com header below Gmail's delivery trace counts)."""
    chosen, _others = _gmail_verdict(header_block)
    if chosen is None:
        return None
    return [
        DkimResult(
            result=r.result,
            domain=_dkim_domain(r),
            selector=r.props.get("header.s") or None,
            b_prefix=r.props.get("header.b") or None,
        )
        for r in _results(chosen)
        if r.method == "dkim"
    ]
