"""A window of a long text body, read in partial FETCHes instead of whole.

A 20 MB text part read whole costs several times its size in memory (the literal, the
transfer-decoded bytes, the text); twenty such reads at once would take gigabytes. Instead the
part is fetched in slices (`BODY.PEEK[part]<start.length>`, RFC 3501 section 6.4.5), each slice
transfer-decoded and charset-decoded incrementally, and only the characters inside the window
are kept. Character offsets stay exactly those of the whole decoded text: decoding carries
partial base64 quanta, unfinished quoted-printable lines, split multi-byte characters and a CR
whose LF is in the next slice over to the next slice. Whether the part has the transfer encoding
it is labelled with is judged once, on the first slice (parse.transfer.judge), so every window of
a mislabelled part is read as it came, never decoded into junk from some offset on.
"""

from __future__ import annotations

import binascii
import codecs
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..text import clean
from .parse.bodystructure import Part
from .parse.charsets import codec_for, fallback_codecs, reported_charset
from .parse.transfer import Ignorable, b64_lenient, b64_noise, judge

if TYPE_CHECKING:
    from .imap import ImapSession

# Encoded bytes per partial FETCH: the most a window read holds at once, whatever the part's size.
SLICE_BYTES = 1 << 20


class TextStream:
    """Transfer decoding, charset decoding, LF newlines and cleaning, one slice at a time."""

    def __init__(self, encoding: str | None, charset: str | None) -> None:
        self._declared = encoding
        self._judged = False  # the transfer encoding is judged on the first slice
        self.transfer_ignored: Ignorable | None = None  # the label the content cannot have (judge)
        self._kind = ""
        self._carry = b""
        self._charset = charset
        self._chars = codecs.getincrementaldecoder(codec_for(charset))("replace")
        self._chosen = False  # the codec is chosen on the first slice that is not plain ASCII
        self.charset_used = reported_charset(charset, codec_for(charset))
        self._cr = False  # a CR held back: it may be the first half of a CRLF

    def _plain_ascii(self, data: bytes) -> bool:
        """Whether a slice is plain ASCII that the declared codec reads as ASCII (an ISO-2022
        escape or UTF-7 shift would not be): the choice of codec then waits for a slice that
        tells the candidates apart."""
        if not data.isascii():
            return False
        try:
            return data.decode(codec_for(self._charset), "strict") == data.decode("ascii")
        except (UnicodeError, LookupError):
            return False

    def _choose(self, data: bytes, final: bool) -> None:
        """The codec for the whole part, from its first slice that is not plain ASCII: the declared
        charset if it decodes that slice cleanly, else UTF-8 if that does, else the declared one
        with replacement (as parse.charsets.decode_checked does for a part read whole). A bad
        byte only in a later slice is replaced under the codec chosen here."""
        self._chosen = True
        for codec in fallback_codecs(self._charset):
            try:
                codecs.getincrementaldecoder(codec)("strict").decode(data, final)
            except (UnicodeError, LookupError):
                continue
            self._chars = codecs.getincrementaldecoder(codec)("replace")
            self.charset_used = reported_charset(self._charset, codec)
            return

    def _judge(self, data: bytes) -> None:
        self._judged = True
        judged = judge(data, self._declared, self._charset, text=True)
        self.transfer_ignored = judged.ignored
        self._kind = judged.encoding if judged.encoding in ("base64", "quoted-printable") else ""

    def _transfer(self, data: bytes, final: bool) -> bytes:
        if not self._judged:
            # Judged on a whole first slice (or the whole part), whatever size the caller feeds.
            self._carry += data
            if len(self._carry) < SLICE_BYTES and not final:
                return b""
            data, self._carry = self._carry, b""
            self._judge(data)
        buffer = self._carry + data
        self._carry = b""
        if self._kind == "base64":
            buffer = b64_noise(buffer)
            if not final:
                # Decode only whole quanta of the run after the last padding; keep the rest.
                run_start = buffer.rfind(b"=") + 1
                cut = len(buffer) - (len(buffer) - run_start) % 4
                buffer, self._carry = buffer[:cut], buffer[cut:]
            return b64_lenient(buffer)
        if self._kind == "quoted-printable":
            if not final:
                cut = buffer.rfind(b"\n") + 1  # whole lines only: "=" escapes never span a line
                buffer, self._carry = buffer[:cut], buffer[cut:]
            return binascii.a2b_qp(buffer)
        return buffer

    def feed(self, data: bytes, *, final: bool) -> str:
        raw = self._transfer(data, final)
        if not self._chosen and not self._plain_ascii(raw):
            self._choose(raw, final)
        try:
            text = raw.decode("ascii") if not self._chosen else self._chars.decode(raw, final)
        except UnicodeError:  # a codec that fails even with errors="replace"
            self._chars = codecs.getincrementaldecoder("utf-8")("replace")
            self.charset_used = "utf-8"
            text = self._chars.decode(raw, final)
        if self._cr:
            text = "\r" + text
            self._cr = False
        if not final and text.endswith("\r"):
            text, self._cr = text[:-1], True
        return clean(text.replace("\r\n", "\n").replace("\r", "\n"))


@dataclass(frozen=True)
class Window:
    text: str
    start: int  # the offset actually used (at most the length)
    total: int  # characters in the whole body
    exact: bool  # False: the body was not read to its end and `total` is an estimate
    more: bool  # text follows after this window
    charset_used: str = "utf-8"  # the charset that decoded the text (TextStream.charset_used)
    transfer_encoding_ignored: Ignorable | None = None  # TextStream.transfer_ignored


def read_window(session: ImapSession, uid: int, part: Part, offset: int, limit: int) -> Window | None:
    """The characters [offset, offset + limit) of a text part; None when Gmail returned no body."""
    stream = TextStream(part.encoding, part.charset)
    wanted_end = offset + limit
    pieces: list[str] = []
    seen = 0  # characters decoded so far
    position = 0  # encoded bytes fetched so far
    while True:
        data = session.fetch_part_slice(uid, part.part_id, position, SLICE_BYTES)
        if data is None and position == 0:
            return None
        data = data or b""
        position += len(data)
        final = len(data) < SLICE_BYTES or (part.size is not None and position >= part.size)
        text = stream.feed(data, final=final)
        low, high = max(offset, seen), min(wanted_end, seen + len(text))
        if low < high:
            pieces.append(text[low - seen : high - seen])
        seen += len(text)
        if final:
            start = min(offset, seen)
            window = "".join(pieces)
            more = start + len(window) < seen
            return Window(window, start, seen, True, more, stream.charset_used, stream.transfer_ignored)
        if seen > wanted_end:
            break
    # Stopped early: estimate the whole length from the characters per encoded byte so far.
    estimate = seen
    if part.size is not None and position:
        estimate = max(seen + 1, round(seen * part.size / position))
    window = "".join(pieces)
    return Window(window, min(offset, seen), estimate, False, True, stream.charset_used, stream.transfer_ignored)
