"""HTML mail as readable text, with the standard library's html.parser.

What a reader of the mail would not see stays out: script, style, head, and every element hidden
by `display:none`, `visibility:hidden`, the `hidden` attribute, a zero font size or a zero
opacity. Hidden text is where a sender puts words meant only for a machine reading the mail, so
the amount dropped is counted and reported instead of being passed on. Paragraphs become blank lines, list items
"- " lines, links "text (url)".

A bottom module: it imports only `text`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from .text import clean

__all__ = ["Converted", "html_to_text"]

# Elements whose content is never shown.
_INVISIBLE = frozenset({"script", "style", "head", "title", "template", "noscript", "object", "iframe"})
_VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"}
)
# Block elements end a line; these also leave a blank line around them.
_PARAGRAPHS = frozenset({"p", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote", "table", "ul", "ol", "pre", "dl"})
_BLOCKS = _PARAGRAPHS | frozenset(
    {
        "div",
        "li",
        "tr",
        "section",
        "article",
        "header",
        "footer",
        "main",
        "nav",
        "aside",
        "address",
        "figure",
        "figcaption",
        "center",
        "dt",
        "dd",
        "form",
        "fieldset",
        "details",
        "summary",
        "caption",
    }
)
# A new block closes an open <p>, as a browser does; a new <li> closes the previous item.
_CLOSES_P = _BLOCKS | frozenset({"hr"})
_CELLS = frozenset({"td", "th"})

_HIDING_STYLE = re.compile(
    r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*(?:hidden|collapse)"
    r"|font-size\s*:\s*0*\.?0+(?:px|pt|em|rem|%|vw|vh)?\s*(?:!important\s*)?(?:;|$)"
    r"|opacity\s*:\s*0*\.?0+\s*(?:!important\s*)?(?:;|$)|mso-hide\s*:\s*all)",
    re.IGNORECASE,
)
_SPACES = re.compile(r"[ \t\r\n\f\v\u00a0]+")
_LINK_SCHEMES = ("http://", "https://", "mailto:", "tel:")
_LINE, _PARA, _PRE_NEWLINE = "\x01", "\x02", "\x00"
_BREAK_RUN = re.compile(r"[ \t\n]*[\x01\x02][\x01\x02 \t\n]*")


@dataclass(frozen=True)
class Converted:
    text: str
    hidden_chars: int  # characters of text that were in the HTML but hidden from a reader


def _hides(attrs: dict[str, str | None]) -> bool:
    return "hidden" in attrs or bool(_HIDING_STYLE.search(attrs.get("style") or ""))


@dataclass
class _Open:
    tag: str
    hidden: bool  # this element itself hides its content
    invisible: bool  # script/style/head: content never counted as hidden text either
    quiet: bool = False  # quoted history or a signature, left out of a preview
    href: str | None = None
    link_start: int = 0
    ordinal: int = 0  # next number inside an <ol>


class _Converter(HTMLParser):
    def __init__(self, *, skip_quotes: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.skip_quotes = skip_quotes
        self.stack: list[_Open] = []
        self.out: list[str] = []
        self.hidden_chars = 0
        self.pre = 0

    # ---- state

    def _hidden(self) -> bool:
        return any(o.hidden for o in self.stack)

    def _invisible(self) -> bool:
        return any(o.invisible or o.quiet for o in self.stack)

    def _emit(self, piece: str) -> None:
        self.out.append(piece)

    def _break(self, blank: bool) -> None:
        self.out.append(_PARA if blank else _LINE)  # resolved in _layout: breaks never pile up

    def _pop_to(self, index: int) -> None:
        while len(self.stack) > index:
            self._close(self.stack.pop())

    def _find(self, tag: str, stop: frozenset[str] = frozenset()) -> int | None:
        for index in range(len(self.stack) - 1, -1, -1):
            if self.stack[index].tag == tag:
                return index
            if self.stack[index].tag in stop:
                return None
        return None

    # ---- parser hooks

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {name.lower(): value for name, value in attrs}
        self._close_implied(tag)
        hidden = _hides(values)
        quiet = self.skip_quotes and _is_quote(tag, values)
        if tag in _VOID:
            if tag in ("br", "hr") and not (self._hidden() or self._invisible() or hidden):
                self._break(tag == "hr")
            return
        element = _Open(tag, hidden=hidden, invisible=tag in _INVISIBLE, quiet=quiet)
        visible = not (self._hidden() or self._invisible() or hidden or quiet)
        if visible:
            if tag in _BLOCKS:
                self._break(tag in _PARAGRAPHS)
            if tag == "li":
                parent = self._find("ol", frozenset({"ul"}))
                if parent is not None:
                    self.stack[parent].ordinal += 1
                    self._emit(f"{self.stack[parent].ordinal}. ")
                else:
                    self._emit("- ")
            if tag == "a":
                element.href = (values.get("href") or "").strip()
                element.link_start = len(self.out)
        if tag == "pre":
            self.pre += 1
        self.stack.append(element)

    def _close_implied(self, tag: str) -> None:
        """Close what HTML closes without an end tag when `tag` starts (a p, an li, a cell, a row)."""
        if tag in _CLOSES_P and self.stack and self.stack[-1].tag == "p":
            self._pop_to(len(self.stack) - 1)
        if tag == "li" and (at := self._find("li", frozenset({"ul", "ol"}))) is not None:
            self._pop_to(at)
        if tag in _CELLS and (at := self._find(tag, frozenset({"tr", "table"}))) is not None:
            self._pop_to(at)
        if tag == "tr" and (at := self._find("tr", frozenset({"table"}))) is not None:
            self._pop_to(at)

    def handle_endtag(self, tag: str) -> None:
        at = self._find(tag)
        if at is not None:
            self._pop_to(at)

    def _close(self, element: _Open) -> None:
        if element.tag == "pre":
            self.pre = max(0, self.pre - 1)
        if self._hidden() or self._invisible() or element.hidden or element.invisible or element.quiet:
            return
        if element.tag == "a" and element.href:
            shown = _SPACES.sub(" ", "".join(self.out[element.link_start :])).strip()
            href = element.href
            if href.lower().startswith(_LINK_SCHEMES) and href not in shown:
                target = href[7:] if href.lower().startswith("mailto:") else href
                if target != shown:
                    self._emit(f" ({href})" if shown else href)
        elif element.tag in _CELLS:
            self._emit(" ")
        elif element.tag in _BLOCKS:
            self._break(element.tag in _PARAGRAPHS)

    def handle_data(self, data: str) -> None:
        if self._invisible():
            return
        if self._hidden():
            self.hidden_chars += len(_SPACES.sub(" ", data).strip())
            return
        if self.pre:
            self._emit(data.replace("\r\n", "\n").replace("\r", "\n").replace("\n", _PRE_NEWLINE))
        else:
            self._emit(_SPACES.sub(" ", data))


def _is_quote(tag: str, attrs: dict[str, str | None]) -> bool:
    """Quoted history and signatures the big mail programs mark in their HTML."""
    classes = set((attrs.get("class") or "").lower().split())
    if classes & {"gmail_quote", "gmail_signature", "gmail_quote_container", "moz-cite-prefix", "moz-signature"}:
        return True
    if tag == "blockquote" and (attrs.get("type") or "").lower() == "cite":
        return True
    return (attrs.get("id") or "").lower() in {"appendonsend", "divrplyfwdmsg", "signature"}


def _layout(raw: str) -> str:
    """Line and paragraph breaks from the markers, spaces collapsed, <pre> newlines restored."""
    text = _BREAK_RUN.sub(lambda m: "\n\n" if _PARA in m.group(0) else "\n", raw)
    lines = [line if _PRE_NEWLINE in line else _SPACES.sub(" ", line).strip() for line in text.split("\n")]
    return "\n".join(lines).strip().replace(_PRE_NEWLINE, "\n")


def html_to_text(markup: str, *, skip_quotes: bool = False) -> Converted:
    """Readable text of an HTML body and how many characters of hidden text were left out.

    With `skip_quotes`, quoted history and signatures marked by Gmail, Thunderbird or Outlook are
    left out too (for previews); they are not counted as hidden text.
    """
    converter = _Converter(skip_quotes=skip_quotes)
    converter.feed(markup or "")
    converter.close()
    converter._pop_to(0)
    return Converted(text=clean(_layout("".join(converter.out))), hidden_chars=converter.hidden_chars)
