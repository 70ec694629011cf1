"""Header-value safety shared by policy and MIME composition: no line breaks or controls.

A bottom module: it imports only `errors`.
"""

from __future__ import annotations

from .errors import MailError

__all__ = ["check_header_value", "is_header_breaking", "is_surrogate"]


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
