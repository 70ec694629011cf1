"""Gmail's delivery trace: the headers Gmail puts above a message it receives over SMTP.

Top down, as in messages delivered to real Gmail mailboxes (see BEHAVIOURS.md): an internal
Received line, ARC-Authentication-Results, Return-Path, the Received line of the final hop
("by mx.google.com"), Received-SPF and Gmail's Authentication-Results. The emulator checks no
signatures and no SPF records: the verdict is what the caller says, `pass` by default. As Gmail
does, the verdict has one `dkim=` result per DKIM-Signature field of the message, naming it by its
`d=` (header.i), `s=` (header.s) and the first 8 characters of its `b=` (header.b); a message
without one gets a single result for its From domain.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from email.utils import format_datetime

from .mime import ParsedMessage

# TEST-NET-1 (RFC 5737): the emulator's sending host is nobody's real address.
CLIENT_IP = "192.0.2.41"
CLIENT_HOST = "mail-out.sender.example"


@dataclass(frozen=True)
class Verdict:
    spf: str = "pass"
    dkim: str = "pass"
    dmarc: str = "pass"


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().strip(">").lower()


def _from_address(raw: bytes) -> str:
    values = ParsedMessage(raw).raw_header("from")
    text = values[0].decode("utf-8", "replace") if values else ""
    if "<" in text and ">" in text:
        text = text[text.rindex("<") + 1 : text.rindex(">")]
    return text.strip()


_TAG = re.compile(r"([a-z]+)\s*=\s*([^;]*)")


def _signatures(raw: bytes) -> list[tuple[str, str, str]]:
    """(d=, s=, the first 8 characters of b=) of every DKIM-Signature field that has all three."""
    found = []
    for value in ParsedMessage(raw).raw_header("dkim-signature"):
        tags = {name: re.sub(r"\s+", "", content) for name, content in _TAG.findall(value.decode("utf-8", "replace"))}
        if tags.get("d") and tags.get("s") and tags.get("b"):
            prefix = tags["b"][:8]
            # Gmail quotes a value that is no RFC 2045 token ("/" is a tspecial): header.b="dzBRjN/u".
            found.append((tags["d"].lower(), tags["s"], f'"{prefix}"' if "/" in prefix or "=" in prefix else prefix))
    return found


def gmail_trace(
    raw: bytes, *, recipient: str, when: datetime, mail_from: str | None = None, verdict: Verdict | None = None
) -> bytes:
    """The trace headers (CRLF lines) Gmail writes above `raw` when it accepts it for `recipient`."""
    verdict = verdict or Verdict()
    sender = _from_address(raw)
    envelope = mail_from or sender or "unknown@sender.example"
    from_domain = _domain(sender) or _domain(envelope)
    stamp = format_datetime(when)
    token = hashlib.sha256(raw[:4096] + recipient.encode()).hexdigest()
    spf_text = (
        f"{verdict.spf} (google.com: domain of {envelope} "
        f"{'designates' if verdict.spf == 'pass' else 'does not designate'} {CLIENT_IP} as permitted sender)"
    )
    signed = _signatures(raw) or [(from_domain, "emu", token[:8])]
    dkim = "".join(f"dkim={verdict.dkim} header.i=@{d} header.s={s} header.b={b};\r\n       " for d, s, b in signed)
    results = (
        f"{dkim}spf={spf_text} smtp.mailfrom={envelope};\r\n"
        f"       dmarc={verdict.dmarc} (p=NONE sp=NONE dis=NONE) header.from={from_domain}"
    )
    lines = [
        f"Received: by 2002:a05:6a10:{token[8:12]}:0:0:0:0 with SMTP id {token[12:24]};\r\n        {stamp}",
        f"ARC-Authentication-Results: i=1; mx.google.com;\r\n       {results}",
        f"Return-Path: <{envelope}>",
        f"Received: from {CLIENT_HOST} ({CLIENT_HOST}. [{CLIENT_IP}])\r\n"
        f"        by mx.google.com with ESMTPS id {token[24:36]}\r\n"
        f"        for <{recipient}>\r\n"
        f"        (version=TLS1_3 cipher=TLS_AES_256_GCM_SHA384 bits=256/256);\r\n        {stamp}",
        f"Received-SPF: {spf_text} client-ip={CLIENT_IP};",
        f"Authentication-Results: mx.google.com;\r\n       {results}",
    ]
    return "".join(line + "\r\n" for line in lines).encode("utf-8")
