"""Text shared by every layer: hidden-character stripping and HTML → plain text.

A bottom module: it imports nothing from the package.
"""

from __future__ import annotations

import re
import unicodedata
from html import unescape
from typing import overload

__all__ = ["clean", "html_to_text", "is_hidden"]

# ---------------------------------------------------------------------------------------------
# Hidden characters


def is_hidden(ch: str) -> bool:
    """True for a Unicode format character that hides or reorders text."""
    # Category Cf covers bidi controls, zero-width characters, the soft hyphen and the tag
    # block; U+E0000 itself is unassigned, so the tag range is named explicitly as well.
    return unicodedata.category(ch) == "Cf" or 0xE0000 <= ord(ch) <= 0xE007F


@overload
def clean(text: str) -> str: ...
@overload
def clean(text: None) -> None: ...
def clean(text: str | None) -> str | None:
    """Remove Unicode format characters that hide or reorder text; keep everything else."""
    if not text or text.isascii():  # ASCII has no format characters: the common fast path
        return text
    # Look each distinct character up once: bodies are long, their alphabets are short.
    hidden = {ord(ch): None for ch in set(text) if is_hidden(ch)}
    return text.translate(hidden) if hidden else text


# ---------------------------------------------------------------------------------------------
# HTML → text: the plain half of a composed message, and of a signature written only in HTML

_BODY_OPEN = re.compile(r"<body\b[^<>]*>", re.IGNORECASE)
_BODY_CLOSE = re.compile(r"</body\s*>", re.IGNORECASE)
_INVISIBLE_BLOCKS = re.compile(
    r"<!--.*?(?:-->|\Z)|<(script|style|head|title)\b[^<>]*>.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL
)
_PRE = re.compile(r"(<pre\b[^<>]*>.*?(?:</pre\s*>|\Z))", re.IGNORECASE | re.DOTALL)
_SPACES = re.compile(r"[ \t\r\n\f\v]+")
_LINE_BREAK = re.compile(
    r"<br\b[^<>]*>|<hr\b[^<>]*>|</(?:p|div|tr|li|h[1-6]|blockquote|ul|ol|table|pre)\s*>|<(?:ul|ol)\b[^<>]*>",
    re.IGNORECASE,
)
_CELL_END = re.compile(r"</t[dh]\s*>", re.IGNORECASE)
_LIST_ITEM = re.compile(r"<li\b[^<>]*>", re.IGNORECASE)
_TAG = re.compile(r"</?[A-Za-z!?][^<>]*>")
_BLANK_LINES = re.compile(r"\n{3,}")


def inner_body(markup: str) -> str:
    """The content between the first <body…> and the last </body>; the whole string without one."""
    opening = _BODY_OPEN.search(markup)
    if opening is None:
        return markup
    end = len(markup)
    for closing in _BODY_CLOSE.finditer(markup, opening.end()):
        end = closing.start()  # the last </body>
    return markup[opening.end() : end]


def _segment_text(segment: str, preformatted: bool) -> str:
    if not preformatted:
        segment = _SPACES.sub(" ", segment)  # source whitespace is not layout, as in a browser
    segment = _LINE_BREAK.sub("\n", segment)
    segment = _CELL_END.sub(" ", segment)
    segment = _LIST_ITEM.sub("- ", segment)
    text = unescape(_TAG.sub("", segment)).replace("\xa0", " ")
    if preformatted:
        return text.replace("\r\n", "\n").replace("\r", "\n")
    return "\n".join(line.strip(" ") for line in text.split("\n"))


def html_to_text(html: str) -> str:
    """Readable text from HTML: body only, no scripts/styles, block ends as newlines, cleaned."""
    markup = _INVISIBLE_BLOCKS.sub("", inner_body(html or ""))
    pieces = [_segment_text(s, index % 2 == 1) for index, s in enumerate(_PRE.split(markup))]
    text = clean("".join(pieces))
    return _BLANK_LINES.sub("\n\n", text).strip()
