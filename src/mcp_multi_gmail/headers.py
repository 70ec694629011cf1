"""Header-value safety shared by policy and MIME composition: no line breaks or controls, one
rule for what a plain address is, and one way to quote a caller's value in an error.

A bottom module: it imports only `errors` (and the standard library's `email` when an address
is checked).
"""

from __future__ import annotations

import unicodedata

from .errors import MailError

__all__ = [
    "ADDRESS_SPECIALS",
    "address_problem",
    "check_header_value",
    "idna_address",
    "is_header_breaking",
    "is_surrogate",
    "show",
]

# Characters that would let one "address" carry a display name, a second address, a group, a
# quoted local part or a domain literal ("[192.0.2.1]") past the allow-list check.
ADDRESS_SPECIALS = frozenset(',;<>"():\\[]')

_SHOW_LIMIT = 200


def is_header_breaking(ch: str) -> bool:
    """Controls that could end a header line or hide in one (TAB is legitimate folding white space)."""
    code = ord(ch)
    if ch == "\t":
        return False
    # C0, DEL, C1 (incl. NEL) and the Unicode line/paragraph separators: Python's str.splitlines
    # treats several of these as line breaks, so none may reach a header.
    return code < 0x20 or 0x7F <= code <= 0x9F or ch in "\u2028\u2029"


def _describe_char(ch: str) -> str:
    names = {"\r": "CR", "\n": "LF", "\x00": "NUL"}
    return f"{names[ch]} (U+{ord(ch):04X})" if ch in names else f"U+{ord(ch):04X}"


def is_surrogate(ch: str) -> bool:
    """An unpaired UTF-16 surrogate: what invalid UTF-8 (a file name, a bad argument) decodes to.
    It cannot be encoded, so it can reach neither a header nor an IMAP command."""
    return "\ud800" <= ch <= "\udfff"


def check_header_value(field: str, value: str) -> None:
    """A header value may not carry line breaks or controls: they could start a new header."""
    bad = [ch for ch in value if is_header_breaking(ch)]
    if bad:
        chars = ", ".join(dict.fromkeys(_describe_char(ch) for ch in bad))
        raise MailError(
            "invalid_input",
            f"The {field} contains a line break or control character ({chars}), which a mail "
            "header cannot carry. Give it on a single line without control characters.",
        )
    if any(is_surrogate(ch) for ch in value):
        raise MailError(
            "invalid_input",
            f"The {field} is not valid text: it contains unpaired surrogates (invalid UTF-8), which a "
            "mail header cannot carry.",
        )


def show(value: str) -> str:
    """A caller-supplied value made safe to quote in a message (controls escaped, length capped)."""
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in value)
    return shown if len(shown) <= _SHOW_LIMIT else shown[:_SHOW_LIMIT] + "…"


def address_problem(address: str) -> str | None:
    """Why `address` is not one plain `local@domain` that Gmail can submit, as the end of a
    sentence about it ("is not a plain e-mail address"); None when it is one.

    The one rule for every address: policy checks recipients with it before anything is opened,
    and composition checks every address with it again. A plain address is an RFC 5322 addr-spec
    with a dot-atom local part (no quoted local part, no domain literal), ASCII before the @, a
    domain that has an IDNA (RFC 5891) form, and no character that only looks like another
    (compatibility characters such as fullwidth letters or the Kelvin sign).
    """
    if (
        not address
        # (controls and line breaks are not printable, so the second test covers them)
        or any(ch.isspace() or not ch.isprintable() or ch in ADDRESS_SPECIALS for ch in address)
        or any(unicodedata.normalize("NFKC", ch) != ch for ch in address)
        or address.count("@") != 1
    ):
        return "is not a plain e-mail address"
    local, _, domain = address.partition("@")
    if not local or not domain:
        return "is not a plain e-mail address"
    if not local.isascii():
        return "has non-ASCII characters before the @, which Gmail cannot submit here"
    try:
        ascii_address = idna_address(address)
    except UnicodeError:
        return "has a domain that is not valid"
    # Loaded here, not at start-up: only a draft or a send checks addresses.
    from email.errors import HeaderParseError
    from email.headerregistry import Address

    try:
        Address(addr_spec=ascii_address)
    except (ValueError, HeaderParseError):  # the package's defects are ValueErrors
        return "is not a valid e-mail address"
    return None


def idna_address(address: str) -> str:
    """`local@domain` with a non-ASCII domain in its IDNA form; raises UnicodeError when it has none."""
    local, _, domain = address.partition("@")
    if domain.isascii():
        return address
    return f"{local}@{domain.encode('idna').decode('ascii')}"
