"""The RFC 5322 address-list tokenizer behind the emulator's ENVELOPE and address search.

Tolerant like the rest of the MIME parsing: any header text gives a list of IMAP address tuples
(name, route, mailbox, host), group start and end markers included, and never an exception.
"""

from __future__ import annotations

__all__ = ["Addr", "parse_address_list"]

Addr = tuple[str | None, str | None, str | None, str | None]  # name, route, mailbox, host (latin-1 text)
_ADDR_SPECIALS = "<>,:;@."
_TOKEN_END = set(' \t\r\n()<>,:;@."[')


class _Tok:
    __slots__ = ("end", "kind", "raw", "start", "text")

    def __init__(self, kind: str, text: str, raw: str, start: int, end: int) -> None:
        self.kind = kind  # "atom" | "qs" | "lit" (domain literal) | "sp" (special) | "cm" (comment)
        self.text = text  # quoted strings unquoted
        self.raw = raw
        self.start = start
        self.end = end


def _comment_end(s: str, i: int) -> int:
    """The index after the (possibly nested) comment starting at `s[i]` == "("."""
    depth, n = 0, len(s)
    while i < n:
        ch = s[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        i += 1
        if depth == 0:
            break
    return i


def _quoted(s: str, start: int) -> _Tok:
    """The quoted string starting at `s[start]` == '"', unquoted (an unclosed one runs to the end)."""
    i, n = start + 1, len(s)
    buf: list[str] = []
    while i < n and s[i] != '"':
        if s[i] == "\\" and i + 1 < n:
            i += 1
        buf.append(s[i])
        i += 1
    i = min(i + 1, n)
    return _Tok("qs", "".join(buf), s[start:i], start, i)


def _addr_tokens(s: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in " \t\r\n":
            i += 1
        elif c == "(":
            start, i = i, _comment_end(s, i)
            # Kept aside: Gmail's ENVELOPE names an addr-spec after its comment (BEHAVIOURS.md).
            toks.append(_Tok("cm", s[start + 1 : i - 1].strip(), s[start:i], start, i))
        elif c == '"':
            toks.append(_quoted(s, i))
            i = toks[-1].end
        elif c == "[":
            start = i
            j = s.find("]", i)
            i = n if j < 0 else j + 1
            toks.append(_Tok("lit", s[start:i], s[start:i], start, i))
        elif c in _ADDR_SPECIALS:
            toks.append(_Tok("sp", c, c, i, i + 1))
            i += 1
        elif c == ")":
            i += 1
        else:
            start = i
            while i < n and s[i] not in _TOKEN_END:
                i += 1
            toks.append(_Tok("atom", s[start:i], s[start:i], start, i))
    return toks


def _phrase(toks: list[_Tok]) -> str | None:
    parts: list[str] = []
    prev_end = -1
    for t in toks:
        if parts and t.start > prev_end:
            parts.append(" ")
        parts.append(t.text)
        prev_end = t.end
    text = "".join(parts).strip()
    return text or None


def _addr_spec(toks: list[_Tok]) -> tuple[str | None, str | None]:
    at = max((i for i, t in enumerate(toks) if t.kind == "sp" and t.text == "@"), default=-1)
    if at < 0:
        local = "".join(t.raw for t in toks)
        return (local or None, "")
    local = "".join(t.raw for t in toks[:at])
    host = "".join(t.raw for t in toks[at + 1 :])
    return (local, host)


def _flush_mailbox(tokens: list[_Tok]) -> Addr | None:
    comments = [t.text for t in tokens if t.kind == "cm" and t.text]
    chunk = [t for t in tokens if t.kind != "cm"]
    if not chunk:
        return None
    lt = next((i for i, t in enumerate(chunk) if t.kind == "sp" and t.text == "<"), -1)
    if lt < 0:
        local, host = _addr_spec(chunk)
        if local is None and not host:
            return None
        # "nsb (Nathaniel Borenstein)": the comment is the name (observed in Gmail's ENVELOPE).
        return (comments[-1] if comments else None, None, local or "", host)
    name = _phrase(chunk[:lt])
    inner: list[_Tok] = []
    for t in chunk[lt + 1 :]:
        if t.kind == "sp" and t.text == ">":
            break
        inner.append(t)
    route: str | None = None
    if inner and inner[0].kind == "sp" and inner[0].text == "@":
        colon = next((i for i, t in enumerate(inner) if t.kind == "sp" and t.text == ":"), -1)
        if colon >= 0:
            route = "".join(t.raw for t in inner[:colon]) or None
            inner = inner[colon + 1 :]
    local, host = _addr_spec(inner)
    return (name, route, local or "", host or "")


def parse_address_list(s: str) -> list[Addr]:
    """RFC 5322 address list -> IMAP address tuples, group start/end markers included."""
    out: list[Addr] = []
    chunk: list[_Tok] = []
    in_angle = False
    in_group = False

    def flush() -> None:
        addr = _flush_mailbox(chunk)
        if addr is not None:
            out.append(addr)
        chunk.clear()

    for tok in _addr_tokens(s):
        is_sp = tok.kind == "sp"
        if in_angle:
            chunk.append(tok)
            if is_sp and tok.text == ">":
                in_angle = False
            continue
        if is_sp and tok.text == "<":
            in_angle = True
            chunk.append(tok)
        elif is_sp and tok.text == ":" and not in_group and not any(t.kind == "sp" and t.text != "." for t in chunk):
            out.append((None, None, _phrase([t for t in chunk if t.kind != "cm"]) or "", None))
            chunk.clear()
            in_group = True
        elif is_sp and tok.text == ",":
            flush()
        elif is_sp and tok.text == ";":
            flush()
            if in_group:
                out.append((None, None, None, None))
                in_group = False
        else:
            chunk.append(tok)
    flush()
    if in_group:
        out.append((None, None, None, None))
    return out
