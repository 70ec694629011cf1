"""Outgoing message composition (gmail/compose.py), its headers: From, Subject and ids as Gmail
and mail readers expect them, Bcc kept out of what SMTP carries, and every unsafe header value refused."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mcp_multi_gmail.config.resolved import Signature
from mcp_multi_gmail.gmail.compose import Composed
from mcp_multi_gmail.policy import check_recipients
from support.composing import SENT_AT, bodies, build, header_block, make_draft, make_quote, parse, refused

GMAIL_ID = "CAF" + "q7Zx" * 16 + "=+Yw@mail.gmail.com"  # longer than a header line


# --- headers ---------------------------------------------------------------------------------


def test_basic_headers() -> None:
    composed = build(make_draft(cc=["eva@example.com"]))
    msg = parse(composed.data)
    assert composed.message_id == "abc123.mg@example.cz"
    assert msg["From"] == "ja@example.cz"
    assert [a.addr_spec for a in msg["To"].addresses] == ["petr@example.com"]
    assert [a.addr_spec for a in msg["Cc"].addresses] == ["eva@example.com"]
    assert msg["Bcc"] is None
    assert msg["Subject"] == "Schůzka"
    assert msg["Date"].datetime == SENT_AT
    assert msg["Message-ID"] == "<abc123.mg@example.cz>"
    assert msg["MIME-Version"] == "1.0"
    assert msg["In-Reply-To"] is None and msg["References"] is None
    assert b"\r\nFrom: ja@example.cz\r\n" in b"\r\n" + header_block(composed.data) + b"\r\n"


def test_from_with_display_name_is_rfc2047_encoded() -> None:
    composed = build(make_draft(from_name="Jana Nováková, ředitelka"))
    raw = header_block(composed.data)
    assert raw.isascii()
    from_line = next(line for line in raw.split(b"\r\n") if line.startswith(b"From:"))
    assert b"=?utf-8?" in from_line
    address = parse(composed.data)["From"].addresses[0]
    assert address.display_name == "Jana Nováková, ředitelka"
    assert address.addr_spec == "ja@example.cz"


def test_ascii_display_name_round_trips() -> None:
    address = parse(build(make_draft(from_name="Office Team")).data)["From"].addresses[0]
    assert (address.display_name, address.addr_spec) == ("Office Team", "ja@example.cz")


def test_non_ascii_subject_is_rfc2047_and_round_trips() -> None:
    subject = "Příliš žluťoučký kůň úpěl ďábelské ódy – a to dost dlouho, aby se hlavička zalomila"
    composed = build(make_draft(subject=subject))
    raw = header_block(composed.data)
    assert raw.isascii()
    assert b"Subject: =?utf-8?" in raw
    assert all(len(line) <= 78 for line in raw.split(b"\r\n") if not line.startswith(b"Content-Type"))
    assert parse(composed.data)["Subject"] == subject


def test_bracketed_message_id_is_returned_bare() -> None:
    composed = build(message_id="<xyz@example.cz>")
    assert composed.message_id == "xyz@example.cz"
    assert parse(composed.data)["Message-ID"] == "<xyz@example.cz>"


@pytest.mark.parametrize("given", ["orig@example.com", "<orig@example.com>", "  <orig@example.com> "])
def test_reply_headers_default_references(given: str) -> None:
    msg = parse(build(make_draft(in_reply_to=given)).data)
    assert msg["In-Reply-To"] == "<orig@example.com>"
    assert msg["References"] == "<orig@example.com>"


def test_given_references_are_normalised() -> None:
    draft = make_draft(in_reply_to="c@x.cz", references=["a@x.cz", "<b@x.cz>", "<a@x.cz>  <c@x.cz>"])
    msg = parse(build(draft).data)
    assert msg["In-Reply-To"] == "<c@x.cz>"
    assert msg["References"] == "<a@x.cz> <b@x.cz> <c@x.cz>"


def test_long_gmail_ids_are_never_encoded() -> None:
    refs = [f"{i}{GMAIL_ID}" for i in range(4)]
    composed = build(make_draft(subject="Re: plain", in_reply_to=refs[-1], references=refs), message_id=GMAIL_ID)
    raw = header_block(composed.data)
    assert b"=?" not in raw
    assert all(len(line) <= 998 for line in raw.split(b"\r\n"))
    msg = parse(composed.data)
    assert msg["Message-ID"] == f"<{GMAIL_ID}>"
    assert msg["In-Reply-To"] == f"<{refs[-1]}>"
    assert msg["References"].split() == [f"<{r}>" for r in refs]
    # Folded between ids, so each continuation line starts with white space then an id.
    refs_block = raw.split(b"References:")[1].split(b"\r\nMIME-Version")[0]
    assert refs_block.count(b"\r\n ") == 3


def test_idn_domain_is_sent_in_its_ascii_form() -> None:
    composed = build(make_draft(to=["info@škola.cz"]))
    assert composed.envelope_recipients == ["info@xn--kola-f6a.cz"]
    assert [a.addr_spec for a in parse(composed.data)["To"].addresses] == ["info@xn--kola-f6a.cz"]


def test_output_uses_crlf_only() -> None:
    draft = make_draft(
        body="řádek jedna\r\nřádek dva\rřádek tři\n" + "dlouhý " * 60,
        signature=Signature("s", "Jan\r\nředitel", None),
        quote=make_quote(text="a\r\nb"),
        attachments=[("a.txt", b"x\r\ny\nz", "text/plain")],
    )
    data = build(draft).data
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert b"\r" not in data.replace(b"\r\n", b"")
    assert all(len(line) <= 998 for line in data.split(b"\r\n"))
    plain, markup = bodies(data)
    assert plain.startswith("řádek jedna\nřádek dva\nřádek tři\n" + "dlouhý " * 60)
    assert "\r" not in plain and "\r" not in markup


def test_only_the_top_level_carries_mime_version() -> None:
    draft = make_draft(attachments=[("a.bin", b"\x00", "application/octet-stream")])
    msg = parse(build(draft).data)
    assert [part["MIME-Version"] for part in msg.walk()][1:] == [None] * 4


# --- Bcc and envelope ------------------------------------------------------------------------


def test_bcc_kept_in_data_and_removed_from_smtp_data() -> None:
    bcc = [f"skryty{i}.prijemce.s.dlouhou.adresou@example.com" for i in range(4)]
    composed = build(make_draft(bcc=bcc, cc=["eva@example.com"]))
    data_msg, smtp_msg = parse(composed.data), parse(composed.smtp_data)
    assert [a.addr_spec for a in data_msg["Bcc"].addresses] == bcc
    assert smtp_msg["Bcc"] is None
    assert b"skryty" not in composed.smtp_data
    # The only difference is the Bcc header (folded over several lines here).
    head = header_block(composed.data).split(b"\r\n")
    start = next(i for i, line in enumerate(head) if line.startswith(b"Bcc:"))
    end = start + 1
    while head[end].startswith((b" ", b"\t")):
        end += 1
    assert end - start > 1
    bcc_lines = b"\r\n".join(head[start:end]) + b"\r\n"
    assert composed.data.replace(bcc_lines, b"", 1) == composed.smtp_data
    assert composed.envelope_recipients == ["petr@example.com", "eva@example.com", *bcc]


def test_without_bcc_both_copies_are_identical() -> None:
    composed = build()
    assert composed.data == composed.smtp_data
    assert b"Bcc:" not in composed.data


def test_envelope_recipients_are_deduplicated_case_insensitively() -> None:
    draft = make_draft(
        to=[" Petr@Example.com", "eva@example.com"], cc=["petr@example.com", "ota@example.com"], bcc=["EVA@example.com"]
    )
    composed = build(draft)
    assert composed.envelope_recipients == ["Petr@Example.com", "eva@example.com", "ota@example.com"]


# --- header injection and malformed values ---------------------------------------------------

INJECTIONS = ["x\r\nBcc: evil@example.org", "x\nX-Injected: 1", "x\rY", "x\x00y", "x\u2028y"]


@pytest.mark.parametrize("bad", INJECTIONS)
@pytest.mark.parametrize(
    ("field", "build_call"),
    [
        ("Subject", lambda bad: build(make_draft(subject=bad))),
        ("From display name", lambda bad: build(make_draft(from_name=bad))),
        ("From address", lambda bad: build(make_draft(from_address="ja@example.cz" + bad))),
        ("To address", lambda bad: build(make_draft(to=["petr@example.com" + bad]))),
        ("Cc address", lambda bad: build(make_draft(cc=[bad + "@example.com"]))),
        ("Bcc address", lambda bad: build(make_draft(bcc=["a@example.com" + bad]))),
        ("attachment filename", lambda bad: build(make_draft(attachments=[(bad + ".pdf", b"x", "a/b")]))),
        ("attachment MIME type", lambda bad: build(make_draft(attachments=[("a.pdf", b"x", "text/" + bad)]))),
        ("In-Reply-To", lambda bad: build(make_draft(in_reply_to="<a@b.cz>" + bad))),
        ("References", lambda bad: build(make_draft(in_reply_to="a@b.cz", references=["a@b.cz", bad]))),
        ("Message-ID", lambda bad: build(message_id="id@example.cz" + bad)),
    ],
)
def test_line_breaks_and_controls_in_header_values_are_refused(
    field: str, build_call: Callable[[str], Composed], bad: str
) -> None:
    refused(lambda: build_call(bad), field, "line break or control character")


@pytest.mark.parametrize(
    "address",
    [
        "Petr <petr@example.com>",
        "a@example.com, b@example.com",
        "a@example.com;b@example.com",
        "pe tr@example.com",
        "petr",
        "a@b@example.com",
        "",
        "@example.com",
        "petr@",
        '"a b"@example.com',
        "péťa@example.com",
    ],
)
def test_anything_but_one_plain_address_is_refused(address: str) -> None:
    refused(lambda: build(make_draft(to=[address])), "To address")
    refused(lambda: build(make_draft(from_address=address)), "From address")


# One rule for what an address is: policy (before anything is opened) and composition accept and
# refuse exactly the same recipients, so a recipient policy let through is never refused later.
ADDRESS_RULE = [
    ("petr@example.com", True),
    ("Petr.Novak+tag@Example.COM", True),
    ("a!#$%&*+/=?^_`{|}~-b@example.com", True),
    ("info@škola.cz", True),
    ("petr@[192.0.2.1]", False),  # a domain literal
    ("[petr]@example.com", False),
    ("petr@example.com]", False),
    ("jiří@example.com", False),  # Gmail cannot submit a non-ASCII local part here
    ("petr@example.co\uff4d", False),  # a fullwidth letter that reads like "m"
    ("petr@\u212aexample.com", False),  # the Kelvin sign, which lower-cases to "k"
    ("petr..novak@example.com", False),
    (".petr@example.com", False),
    ("petr@example..com", False),
    ("petr@example.com.", False),
    ('"petr"@example.com', False),
    ("petr(x)@example.com", False),
    ("petr@exa mple.com", False),
    ("petr@@example.com", False),
]


@pytest.mark.parametrize(("address", "plain"), ADDRESS_RULE, ids=[a for a, _ in ADDRESS_RULE])
def test_policy_and_composition_share_one_address_rule(address: str, plain: bool) -> None:
    if plain:
        check_recipients("osobni", None, [address])
        composed = build(make_draft(to=[address], from_address=address))
        assert len(composed.envelope_recipients) == 1
    else:
        refused(lambda: check_recipients("osobni", None, [address]), "Not a plain e-mail address")
        refused(lambda: build(make_draft(to=[address])), "To address")
        refused(lambda: build(make_draft(from_address=address)), "From address")


@pytest.mark.parametrize("bad", ["two ids@example.com", "<a@b.cz> <c@d.cz>", "<>", "a<b@c.cz", "id@příklad.cz"])
def test_malformed_message_ids_are_refused(bad: str) -> None:
    refused(lambda: build(make_draft(in_reply_to=bad)), "In-Reply-To")


def test_bare_string_recipient_list_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        build(make_draft(to="petr@example.com"))
