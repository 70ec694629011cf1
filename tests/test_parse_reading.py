"""Names and transfer encodings read as a person would read them (issue 33): a raw UTF-8 name cut
inside its last character, and parts labelled base64 or quoted-printable whose content is not.

Structures go through imapclient's own parser, as in a session (tests/test_parse_bodystructure.py, `structure`).
"""

from __future__ import annotations

import base64
import os
import quopri
from urllib.parse import quote_from_bytes

import pytest
from imapclient.response_parser import parse_fetch_response

from mcp_multi_gmail.gmail.bodystream import SLICE_BYTES, TextStream
from mcp_multi_gmail.gmail.parse.bodystructure import Part, parts
from mcp_multi_gmail.gmail.parse.charsets import undeclared
from mcp_multi_gmail.gmail.parse.encoded_words import decode_words
from mcp_multi_gmail.gmail.parse.transfer import (
    FAR_LESS_VALID_PER_1000,
    NOT_BASE64_SHARE,
    decode_body,
    judge,
    read_part,
    uu_blocks,
)

NAME = "Картинка с котиком.jpg"
CUT = NAME.encode()[:29]  # "Картинка с коти", then the first byte of "к"


def structure(*pieces: bytes) -> list[Part]:
    """BODYSTRUCTURE from wire text with literals: `pieces` alternate text and a literal's bytes,
    chunked as imaplib hands them to imapclient's parser in a session."""
    text, literals = list(pieces[::2]), list(pieces[1::2])
    text[0] = b"1 (UID 1 BODYSTRUCTURE " + text[0]
    text[-1] += b")"
    lines: list[object] = [(t + b"{%d}" % len(lit), lit) for t, lit in zip(text, literals, strict=False)]
    lines.append(text[-1])
    return parts(dict(parse_fetch_response(lines, normalise_times=False)[1])[b"BODYSTRUCTURE"])


def named(filename: bytes, name: bytes | None = None) -> str | None:
    """The file name the client reads for an image part whose filename (and name) parameters hold
    these bytes, as literals, the way the emulator and a server that copies the bytes send them."""
    tail = b' NIL NIL "BASE64" 8 NIL ("ATTACHMENT" ("FILENAME" '
    if name is None:
        (part,) = structure(b'("IMAGE" "JPEG" NIL' + tail, filename, b")) NIL)")
    else:
        (part,) = structure(b'("IMAGE" "JPEG" ("NAME" ', name, b")" + tail, filename, b")) NIL)")
    return part.filename


# ------------------------------------------------------------------ names


def test_a_utf8_name_cut_inside_its_last_character_reads_as_utf8_without_it() -> None:
    assert CUT[-1:] == b"\xd0" and CUT.decode("utf-8", "ignore") == "Картинка с коти"
    assert named(CUT) == "Картинка с коти"
    assert named(CUT, CUT) == "Картинка с коти"  # Content-Type name too


def test_the_content_type_name_alone_is_read_the_same() -> None:
    (part,) = structure(b'("IMAGE" "JPEG" ("NAME" ', CUT, b') NIL NIL "BASE64" 8 NIL NIL NIL)')
    assert part.filename == "Картинка с коти"


@pytest.mark.parametrize("cut", [1, 2, 3])
def test_every_unfinished_length_of_a_four_byte_character_is_dropped(cut: int) -> None:
    raw = "Dovolená 🏖".encode()
    assert named(raw[: len(raw) - 4 + cut]) == "Dovolená"  # the space before it goes with the name's end


def test_whole_utf8_names_are_unchanged() -> None:
    assert named(NAME.encode()) == NAME


def test_latin1_names_stay_latin1() -> None:
    assert named("Café.pdf".encode("latin-1")) == "Café.pdf"
    # Ends like the start of a UTF-8 sequence, but holds no whole UTF-8 character before it.
    assert named("José".encode("latin-1")) == "José"
    assert named("Müller Straße".encode("latin-1")) == "Müller Straße"


def test_an_invalid_byte_in_the_middle_keeps_the_whole_name_latin1() -> None:
    raw = NAME.encode()[:6] + b"\xff" + NAME.encode()[6:]
    assert named(raw) == raw.decode("latin-1")


def test_a_cut_name_under_a_declared_charset_loses_only_the_broken_character() -> None:
    rfc2231 = b"utf-8''" + quote_from_bytes(CUT).encode()
    wire = b'("IMAGE" "JPEG" NIL NIL NIL "BASE64" 8 NIL ("ATTACHMENT" ("FILENAME*" "' + rfc2231 + b'")) NIL)'
    (part,) = structure(wire)
    assert part.filename == "Картинка с коти"
    word = b"=?UTF-8?B?" + base64.b64encode(CUT) + b"?="
    assert named(word) == "Картинка с коти"


def test_a_name_the_server_replaced_the_broken_end_of_is_read_without_it() -> None:
    # knob param_8bit="utf8_replaced": U+FFFD, sent as UTF-8, where the bytes were not UTF-8.
    assert named(CUT.decode("utf-8", "replace").encode()) == "Картинка с коти"
    middle = "Kar\ufffdinka.jpg".encode()
    assert named(middle) == "Kar\ufffdinka.jpg"  # only a U+FFFD at the very end is a cut


def test_subjects_are_read_the_same_and_identifiers_keep_every_byte() -> None:
    assert decode_words(CUT) == "Картинка с коти"
    assert decode_words("Jídelníček".encode("latin-1", "replace")) == "Jídelní?ek"  # not UTF-8: Latin-1
    assert undeclared(CUT) == (CUT.decode("latin-1"), "latin-1")  # a Message-ID or a mailbox: every byte


def test_a_uuencoded_file_cut_inside_its_name_is_named_as_a_header_is() -> None:
    text = b"begin 644 " + CUT + b"\r\n#86)C\r\n`\r\nend\r\n"
    (block,) = uu_blocks(text)
    assert block.name == "Картинка с коти" and block.data(text) == b"abc"


# ------------------------------------------------------------------ base64 that is not


WORDS = "Dobrý den, posílám slíbený přehled za říjen.\r\nS pozdravem Karel\r\n"


def test_words_labelled_base64_are_read_as_they_came() -> None:
    data = WORDS.encode()
    assert judge(data, "base64", "utf-8", text=True).ignored == "base64"
    part = read_part(data, "base64", "utf-8")
    assert part.text == WORDS.replace("\r\n", "\n") and part.transfer_ignored == "base64"
    assert "\ufffd" not in part.text
    assert judge(data, "base64").ignored == "base64"  # a file too: its characters say it


def test_real_base64_is_decoded_as_before() -> None:
    data = base64.encodebytes(WORDS.encode() * 50).replace(b"\n", b"\r\n")
    part = read_part(data, "base64", "utf-8")
    assert part.text == (WORDS * 50).replace("\r\n", "\n") and part.transfer_ignored is None


def test_base64_with_a_stray_character_or_an_epilogue_is_still_base64() -> None:
    gif = base64.encodebytes(os.urandom(400)).replace(b"\n", b"\r\n")
    epilogue = b"XXXXXX--unique-boundary-2--\r\n\r\nThe epilogue for the inner multipart message.\r\n"
    assert judge(gif + epilogue, "base64").ignored is None
    assert judge(b"YWhvaiA=\r\n*c3bEm3Rl\r\n", "base64", "utf-8", text=True).ignored is None


def test_a_file_inside_a_text_part_stays_base64_though_it_is_no_text() -> None:
    data = base64.encodebytes(os.urandom(3000))  # encoder lines: a file, whatever the label says
    assert judge(data, "base64", "utf-8", text=True).ignored is None


def test_single_words_without_punctuation_are_judged_by_what_decoding_makes_of_them() -> None:
    # All in base64's alphabet; decoded, a text full of control characters.
    data = b"Thanks\r\nKarel\r\n"
    assert judge(data, "base64", "utf-8", text=True).ignored == "base64"
    assert read_part(data, "base64", "utf-8").text == "Thanks\nKarel\n"
    assert judge(data, "base64").ignored is None  # a file's bytes need not be text: decoded
    assert judge(base64.b64encode(b"Hi Jana"), "base64", "utf-8", text=True).ignored is None


def test_the_alphabet_threshold_is_a_tenth_of_the_characters() -> None:
    assert NOT_BASE64_SHARE == 0.1 and FAR_LESS_VALID_PER_1000 == 20
    base = base64.encodebytes(os.urandom(57 * 20))  # 20 lines of 76 characters: 1520
    assert judge(base + b"." * 150, "base64").ignored is None  # 150 of 1670: under a tenth
    assert judge(base + b"." * 170, "base64").ignored == "base64"  # 170 of 1690: over


def test_eight_bit_text_labelled_base64_is_read_as_it_came() -> None:
    data = "Привет, это обычный текст.".encode()
    assert read_part(data, "base64", "utf-8") == ("Привет, это обычный текст.", "utf-8", "base64")


# ------------------------------------------------------------------ quoted-printable that is not

HTML = (
    '<p style="color:red" class="x">Dobrý den</p>\r\n<table width=100 bgcolor=FFFFFF><tr><td>a=b</td></tr></table>\r\n'
)


def test_raw_html_labelled_quoted_printable_is_read_as_it_came() -> None:
    data = HTML.encode()
    part = read_part(data, "quoted-printable", "utf-8", "text/html")
    assert part.transfer_ignored == "quoted-printable" and part.text == HTML.replace("\r\n", "\n")
    assert "width=100" in part.text and "\ufffd" not in part.text


def test_real_quoted_printable_with_a_stray_equals_sign_decodes_as_before() -> None:
    data = quopri.encodestring(("Příliš žluťoučký kůň úpěl ďábelské ódy. " * 20).encode()) + b"\r\nx = 5\r\n"
    part = read_part(data, "quoted-printable", "utf-8")
    assert part.transfer_ignored is None and part.text.startswith("Příliš žluťoučký")


def test_unescaped_attributes_beside_real_escapes_decode_as_quoted_printable() -> None:
    # An encoder that left `="` alone but wrote the letters as escapes: decoding makes clean text.
    data = b'<a href="x" class="y" id="z">Dobr=C3=BD den</a>'
    assert (
        read_part(data, "quoted-printable", "utf-8", "text/html").text == '<a href="x" class="y" id="z">Dobrý den</a>'
    )


def test_a_charset_label_that_is_wrong_does_not_make_quoted_printable_wrong() -> None:
    data = b"caf=E9 cr=E8me"  # Latin-1 escapes under a UTF-8 label: the escapes are real
    assert judge(data, "quoted-printable", "utf-8", text=True).ignored is None


def test_equals_signs_that_change_nothing_are_not_reported() -> None:
    assert judge(b"a = b, c = d", "quoted-printable", "utf-8", text=True).ignored is None


# ------------------------------------------------------------------ slices and previews


def test_a_long_mislabelled_part_reads_the_same_in_slices_at_every_offset() -> None:
    data = (WORDS * (SLICE_BYTES // len(WORDS.encode()) + 200)).encode()
    assert len(data) > SLICE_BYTES
    whole = read_part(data, "base64", "utf-8")
    for size in (SLICE_BYTES, 4096 * 7 + 1):
        stream = TextStream("base64", "utf-8")
        pieces = [stream.feed(data[i : i + size], final=i + size >= len(data)) for i in range(0, len(data), size)]
        assert "".join(pieces) == whole.text and stream.transfer_ignored == "base64"
    later = whole.text[-500:]  # past the first slice
    assert "\ufffd" not in later and "Dobrý den" in later


def test_a_preview_of_the_beginning_follows_the_same_decision() -> None:
    data = (WORDS * 200).encode()
    assert decode_body(data[:4096], "base64", "utf-8").startswith("Dobrý den, posílám")
