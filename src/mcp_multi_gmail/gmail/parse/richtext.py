"""text/enriched (RFC 1896) and its predecessor text/richtext (RFC 1341 section 7.1.3) as plain text.

Formatting commands are dropped; what a reader sees is kept. In text/enriched "<<" is a literal
"<", a lone line break is a space and n consecutive breaks are n - 1 line breaks, and the text of
<param> is not shown. In text/richtext "<lt>" is "<", "<nl>" is a line break, and a line break in
the data is a space. <comment> text is shown by neither.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"<<|<(/?)([A-Za-z0-9-]{1,60})>|[^<]+|<")
_HIDDEN = ("param", "comment")


def _strip(text: str, *, enriched: bool) -> str:
    out: list[str] = []
    hidden: list[str] = []  # open <param>/<comment> commands whose text is not shown
    for token in _TOKEN.finditer(text):
        piece, name = token.group(0), token.group(2)
        if name is None:
            if not hidden:
                out.append("<" if enriched and piece == "<<" else piece)
            continue
        name, closing = name.lower(), token.group(1) == "/"
        if name in _HIDDEN:
            if closing and name in hidden:
                hidden.remove(name)
            elif not closing:
                hidden.append(name)
        elif not hidden and not enriched and not closing:
            out.append({"lt": "<", "nl": "\n", "np": "\n\n"}.get(name, ""))
    return "".join(out)


def _enriched_breaks(text: str) -> str:
    """RFC 1896: one line break is a space; a run of n breaks is n - 1 line breaks."""
    return re.sub(r"\n+", lambda m: " " if len(m.group(0)) == 1 else "\n" * (len(m.group(0)) - 1), text)


def rich_to_text(text: str, mime_type: str) -> str:
    """The text a reader of a text/enriched or text/richtext part sees (LF line ends in and out)."""
    # A line break that ends the text became a space, which nobody reads.
    if mime_type == "text/enriched":
        return _strip(_enriched_breaks(text), enriched=True).rstrip(" ")
    return _strip(text.replace("\n", " "), enriched=False).rstrip(" ")


def is_rich(mime_type: str) -> bool:
    return mime_type in ("text/enriched", "text/richtext")
