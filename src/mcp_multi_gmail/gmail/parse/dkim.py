"""DKIM-Signature fields (RFC 6376 section 3.5) and which of them Gmail's verdict passed.

Nothing is verified here: Gmail checked every signature when the message arrived and wrote its
verdict into its own Authentication-Results (`authresults.gmail_dkim_results`). What this module
adds is the link between a passing result and the signature it speaks of, so that the signature's
`h=` tag tells which header fields that pass vouches for.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .authresults import DkimResult

# Folding white space may stand anywhere between the tokens of a tag list (RFC 6376 section 3.2).
_WSP = re.compile(r"[ \t\r\n]+")
_QP = re.compile(r"=([0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class Signature:
    """The tags of one DKIM-Signature field that say whose it is and what it covers."""

    domain: str  # d=, lower-cased
    selector: str  # s=, lower-cased
    signed: tuple[str, ...]  # h=: the signed field names, lower-cased, in order (a repeated name signs two instances)
    b: str  # b=, white space removed
    identity_domain: str | None = None  # the domain of i= (the AUID), when the tag is there

    def covers(self, field: str, instances: int = 1) -> bool:
        """Whether the signature covers `instances` instances of `field`: each appearance of a name
        in h= signs one instance, counted from the bottom of the header (RFC 6376 section 5.4.2)."""
        return instances >= 1 and self.signed.count(field.lower()) >= instances


def tags(value: str) -> dict[str, str]:
    """A tag list (`name=value; …`, RFC 6376 section 3.2) as a dict; a repeated tag makes the whole
    list invalid (empty answer), as the RFC says."""
    found: dict[str, str] = {}
    for spec in value.split(";"):
        name, equals, content = spec.partition("=")
        name = _WSP.sub("", name)
        if not equals:
            if name:
                return {}  # a tag without "=": not a tag list
            continue  # an empty spec (a trailing ";")
        if not name or name in found:
            return {}
        found[name] = content.strip(" \t\r\n")
    return found


def _identity_domain(auid: str) -> str | None:
    # i= is dkim-quoted-printable ("info=3Dx.com@mail.example"): its domain follows the last "@".
    decoded = _QP.sub(lambda m: chr(int(m.group(1), 16)), _WSP.sub("", auid))
    domain = decoded.rpartition("@")[2].strip().strip(".").lower()
    return domain or None


def signature(value: str) -> Signature | None:
    """One DKIM-Signature field's value (unfolded or not); None when it lacks d=, s=, h= or b=."""
    found = tags(value)
    domain = _WSP.sub("", found.get("d", "")).strip(".").lower()
    selector = _WSP.sub("", found.get("s", "")).lower()
    signed = tuple(name for name in (_WSP.sub("", part).lower() for part in found.get("h", "").split(":")) if name)
    b = _WSP.sub("", found.get("b", ""))
    if not domain or not selector or not signed or not b:
        return None
    auid = found.get("i")
    return Signature(domain, selector, signed, b, _identity_domain(auid) if auid else None)


def signatures(values: Iterable[str]) -> list[Signature]:
    """The readable DKIM-Signature fields among `values`, in their order."""
    return [sig for sig in (signature(v) for v in values) if sig is not None]


def speaks_of(result: DkimResult, sig: Signature) -> bool:
    """Whether Gmail's result names this signature: the same signing domain (header.d, or the domain
    of header.i, against d= or the domain of i=), the same selector (header.s = s=), and, when
    Gmail gives header.b, a b= that starts with it. A result without header.s names no signature:
    several signatures of one domain could not be told apart."""
    if result.domain is None or result.selector is None:
        return False
    if result.domain not in (sig.domain, sig.identity_domain):
        return False
    if result.selector.lower() != sig.selector:
        return False
    return result.b_prefix is None or sig.b.startswith(result.b_prefix)


def passed(results: Sequence[DkimResult], sigs: Sequence[Signature]) -> list[Signature]:
    """The signatures that one of Gmail's `dkim=pass` results speaks of."""
    passing = [r for r in results if r.result == "pass"]
    return [sig for sig in sigs if any(speaks_of(r, sig) for r in passing)]
