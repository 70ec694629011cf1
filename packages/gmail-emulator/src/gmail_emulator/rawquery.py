"""Gmail's X-GM-RAW query language, read: the lexer and parser that turn a query into the nodes of
`rawsearch`, which match them (the subset listed in BEHAVIOURS.md, with the operators of
https://support.google.com/mail/answer/7190).

Grammar (only upper-case ``OR`` / ``AND`` / ``NOT`` are operators)::

    query   := or_expr
    or_expr := and_expr ("OR" and_expr)*
    and_expr:= unary (["AND"] unary)*
    unary   := ("-" | "NOT ") unary | primary
    primary := "(" or_expr ")" | "{" unary* "}"          (braces mean OR)
             | field ":" value | "\\"" phrase "\\"" | word
    value   := "\\"" phrase "\\"" | "(" or_expr ")" | "{" unary* "}" | word

Inside ``field:( ... )`` and ``field:{ ... }`` bare words and phrases apply to that field.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gmail_emulator.rawsearch import And, MatchAll, Not, Or, RawNode, RawQueryError, Term

__all__ = ["parse_raw"]


# --------------------------------------------------------------------------- lexer

_FIELD_WORD = re.compile(r"([A-Za-z][A-Za-z0-9_]*):(.*)", re.S)
_STOP = set(' \t\r\n()"{}')


@dataclass
class _Tok:
    kind: str  # "word" | "phrase" | "(" | ")" | "{" | "}" | "-"
    text: str
    adjacent: bool  # no whitespace between this token and the previous one


def _read_phrase(q: str, i: int) -> tuple[str, int]:
    """``q[i]`` is the opening quote; return (unescaped text, index after the closing quote)."""
    buf: list[str] = []
    i += 1
    while i < len(q):
        c = q[i]
        if c == "\\" and i + 1 < len(q) and q[i + 1] in '"\\':
            buf.append(q[i + 1])
            i += 2
            continue
        if c == '"':
            return "".join(buf), i + 1
        buf.append(c)
        i += 1
    raise RawQueryError("unbalanced quote")


def _lex(q: str) -> list[_Tok]:
    toks: list[_Tok] = []
    i, n = 0, len(q)
    adjacent = False
    open_groups = {"(": 0, "{": 0}
    while i < n:
        c = q[i]
        if c.isspace():
            adjacent = False
            i += 1
            continue
        starts_term = not adjacent or (bool(toks) and toks[-1].kind in ("(", "{", "-"))
        if c == '"':
            text, i = _read_phrase(q, i)
            toks.append(_Tok("phrase", text, adjacent))
        elif c in "({":
            open_groups[c] += 1
            toks.append(_Tok(c, c, adjacent))
            i += 1
        elif c in ")}":
            opener = "(" if c == ")" else "{"
            open_groups[opener] = max(0, open_groups[opener] - 1)
            toks.append(_Tok(c, c, adjacent))
            i += 1
        elif c in "-+" and starts_term and i + 1 < n and not q[i + 1].isspace():
            if c == "-":
                toks.append(_Tok("-", c, adjacent))
            i += 1  # "+word" (exact word) is the same as "word" here
            adjacent = True
            continue
        else:
            word, i = _read_word(q, i, open_groups)
            toks.append(_Tok("word", word, adjacent))
        adjacent = True
    return toks


def _read_word(q: str, start: int, open_groups: dict[str, int]) -> tuple[str, int]:
    """The word starting at `start` and the index after it (`open_groups`: brackets still open)."""
    i, n = start, len(q)
    while i < n and q[i] not in _STOP:
        i += 1
    word = q[start:i]
    if word.lower().startswith("rfc822msgid:") and len(word) > len("rfc822msgid:"):
        # message ids may contain (){}: take everything up to whitespace, then give back
        # trailing brackets that close an enclosing group
        while i < n and not q[i].isspace():
            i += 1
        word = q[start:i]
        for close, opener in ((")", "("), ("}", "{")):
            budget = open_groups[opener]
            while budget and word.endswith(close) and word.count(close) > word.count(opener):
                word = word[:-1]
                i -= 1
                budget -= 1
    return word, i


# --------------------------------------------------------------------------- parser


class _Parser:
    def __init__(self, toks: list[_Tok]) -> None:
        self.toks = toks
        self.pos = 0

    def peek(self) -> _Tok | None:
        return self.toks[self.pos] if self.pos < len(self.toks) else None

    def take(self) -> _Tok:
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    @staticmethod
    def _is_kw(tok: _Tok | None, kw: str) -> bool:
        return tok is not None and tok.kind == "word" and tok.text == kw

    def parse(self) -> RawNode:
        node = self.or_expr(None)
        tok = self.peek()
        if tok is not None:
            raise RawQueryError(f"unbalanced {tok.text!r}")
        return node

    def or_expr(self, field: str | None) -> RawNode:
        alternatives: list[RawNode] = []
        while True:
            part = self.and_expr(field)
            if part is not None:
                alternatives.append(part)
            if self._is_kw(self.peek(), "OR"):
                self.take()
                continue
            break
        if not alternatives:
            return MatchAll()
        return alternatives[0] if len(alternatives) == 1 else Or(tuple(alternatives))

    def and_expr(self, field: str | None) -> RawNode | None:
        items: list[RawNode] = []
        while True:
            tok = self.peek()
            if tok is None or tok.kind in (")", "}") or self._is_kw(tok, "OR"):
                break
            if self._is_kw(tok, "AND"):
                self.take()
                continue
            items.append(self.unary(field))
        if not items:
            return None
        return items[0] if len(items) == 1 else And(tuple(items))

    def unary(self, field: str | None) -> RawNode:
        tok = self.take()
        if tok.kind == "-" or self._is_kw(tok, "NOT"):
            nxt = self.peek()
            if nxt is None or nxt.kind in (")", "}") or self._is_kw(nxt, "OR"):
                return MatchAll()  # dangling negation: ignore
            return Not(self.unary(field))
        return self.primary(tok, field)

    def group(self, close: str, field: str | None) -> RawNode:
        if close == ")":
            node = self.or_expr(field)
        else:
            items: list[RawNode] = []
            while True:
                tok = self.peek()
                if tok is None or tok.kind in (")", "}"):
                    break
                if self._is_kw(tok, "OR") or self._is_kw(tok, "AND"):
                    self.take()
                    continue
                items.append(self.unary(field))
            node = Or(tuple(items)) if items else MatchAll()
        tok = self.peek()
        if tok is None or tok.kind != close:
            raise RawQueryError(f"unbalanced {'(' if close == ')' else '{'}")
        self.take()
        return node

    def primary(self, tok: _Tok, field: str | None) -> RawNode:
        if tok.kind == "(":
            return self.group(")", field)
        if tok.kind == "{":
            return self.group("}", field)
        if tok.kind in (")", "}"):
            raise RawQueryError(f"unbalanced {tok.text!r}")
        if tok.kind == "phrase":
            return Term(field, tok.text)
        m = _FIELD_WORD.fullmatch(tok.text)
        if m is None:
            return Term(field, tok.text)
        name, value = m.group(1).lower(), m.group(2)
        if value:
            return Term(name, value)
        nxt = self.peek()
        if nxt is not None and nxt.adjacent:
            if nxt.kind == "phrase":
                self.take()
                return Term(name, nxt.text)
            if nxt.kind in ("(", "{"):
                self.take()
                return self.group(")" if nxt.kind == "(" else "}", name)
        return MatchAll()  # "field:" with no value is ignored


def parse_raw(query: str) -> RawNode:
    """Parse an X-GM-RAW query; raise ``RawQueryError`` on unbalanced quotes/parens/braces."""
    return _Parser(_lex(query)).parse()
