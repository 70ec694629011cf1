"""The list fields, mailto URLs, DKIM-Signature tags and Gmail's DKIM results, read from header
forms real senders write: Mailchimp, Mailman and a folded signature from the corpus of other mail
libraries' test messages (tests/corpus, SOURCES.md), and Google Groups' and Gmail's own forms."""

from __future__ import annotations

import pytest

from mcp_multi_gmail.gmail.parse import dkim, listheaders
from mcp_multi_gmail.gmail.parse.authresults import DkimResult, gmail_dkim_results
from mcp_multi_gmail.gmail.parse.listheaders import ListId, list_facts, list_id, mailto, unsubscribe_uris
from support.corpus import message_bytes


def header_of(name: str, starting_at: bytes = b"") -> bytes:
    """A corpus message's header block (or that of the message inside it whose header has the line
    `starting_at`)."""
    raw = message_bytes(name).replace(b"\r\n", b"\n")
    if starting_at:
        raw = raw[raw.index(b"\n" + starting_at) + 1 :]
    return raw.split(b"\n\n", 1)[0] + b"\n\n"


# A delivery report that carries the returned message, whose own header starts at its Received lines.
REPORT = "ruby-mail/multipart_report_emails/multipart_report_multiple_status.eml"
RETURNED = b"Received: from blah.com ([1.1.1.1])"


# --------------------------------------------------------------------------- List-Unsubscribe


def test_mailchimp_offers_https_then_mailto_and_one_click() -> None:
    facts = list_facts(header_of("mail-parser/mail_test_13"))
    assert facts.uris == (
        "https://cimanagementconference.us14.list-manage.com/unsubscribe?u=3f21937f0f636c8cec1db30bf&id=9bc9573bd6"
        "&e=042ea43672&c=199bb58d0b",
        "mailto:unsubscribe-mc.us14_3f21937f0f636c8cec1db30bf.199bb58d0b-042ea43672@mailin.mcsv.net?subject=unsubscribe",
    )
    assert facts.one_click_post and facts.post_fields == 1 and facts.unsubscribe_fields == 1
    assert facts.list_id == ListId(
        "3f21937f0f636c8cec1db30bf.140953.list-id.mcsv.net", "3f21937f0f636c8cec1db30bfmc list"
    )
    assert facts.first("https") == facts.uris[0] and facts.first("mailto") == facts.uris[1]
    # No Gmail verdict in this message (it did not come through Gmail): nothing is vouched for.
    assert not facts.gmail_verdict and facts.matched == () and facts.signed_by("list-unsubscribe") is None


def test_mailman_folded_field_with_trailing_space_and_a_phrase_list_id() -> None:
    facts = list_facts(header_of("mime4j/mime4j-219-new-date-time-format.msg"))
    assert facts.uris == (
        "http://lists.squeakfoundation.org/mailman/listinfo/vm-dev",
        "mailto:vm-dev-request@lists.squeakfoundation.org?subject=unsubscribe",
    )
    assert facts.post_fields == 0 and not facts.one_click_post and facts.first("https") is None
    assert facts.list_id == ListId("vm-dev.lists.squeakfoundation.org", "Squeak Virtual Machine Development Discussion")
    assert facts.group == "list:vm-dev.lists.squeakfoundation.org"


def test_a_field_folded_before_its_first_uri_and_an_id_with_a_space() -> None:
    facts = list_facts(header_of("mail-parser/mail_test_6"))
    assert len(facts.uris) == 1 and facts.uris[0].startswith("https://ggg.com/subs/unsubs_user.html?subs=13&hash=")
    assert facts.list_id == ListId("770capital.ggg.com", None)  # white space inside the brackets is ignored
    assert facts.sender == "noreply@ggg.com"


def test_mailto_only_field_without_a_list_id_groups_by_sender() -> None:
    facts = list_facts(header_of(REPORT, RETURNED))
    assert facts.uris == ("mailto:unsubscribe+45b0d380@blah.com",)
    assert facts.list_id is None and facts.group == f"from:{facts.sender}"


@pytest.mark.parametrize(
    ("value", "uris"),
    [
        # RFC 2369's own examples
        ("<mailto:list@host.com?subject=unsubscribe>", ["mailto:list@host.com?subject=unsubscribe"]),
        (
            "(Use this command to get off the list)\r\n     <mailto:list-manager@host.com?body=unsubscribe%20list>",
            ["mailto:list-manager@host.com?body=unsubscribe%20list"],
        ),
        (
            "<mailto:list-request@host.com?subject=unsubscribe>,\r\n <http://www.host.com/list.cgi?cmd=unsub&lst=list>",
            ["mailto:list-request@host.com?subject=unsubscribe", "http://www.host.com/list.cgi?cmd=unsub&lst=list"],
        ),
        # Google Groups: the mailto first, the web page second, folded
        (
            "<mailto:googlegroups-manage+358814495539+unsubscribe@googlegroups.com>,\r\n"
            " <https://groups.google.com/group/kasan-dev/subscribe>",
            [
                "mailto:googlegroups-manage+358814495539+unsubscribe@googlegroups.com",
                "https://groups.google.com/group/kasan-dev/subscribe",
            ],
        ),
        # white space an MTA broke into a URI is ignored; a comment between items is skipped
        (
            "<https://x.example/u?a=1\r\n\t&b=2> (web), <mailto:u@x.example>",
            ["https://x.example/u?a=1&b=2", "mailto:u@x.example"],
        ),
        ("(nested (comment) with \\) escaped) <mailto:a@x.example>", ["mailto:a@x.example"]),
        # a field that does not start with "<" offers nothing; an item that is not bracketed ends the list
        ("https://x.example/unsubscribe", []),
        ("mailto:a@x.example, <https://x.example/u>", []),
        ("<mailto:a@x.example> click here, <https://x.example/u>", ["mailto:a@x.example"]),
        ("<mailto:a@x.example>, https://x.example/u", ["mailto:a@x.example"]),
        ("<https://x.example/u", []),  # never closed
        ("<>, <mailto:a@x.example>", ["mailto:a@x.example"]),
        ("", []),
    ],
)
def test_list_unsubscribe_forms(value: str, uris: list[str]) -> None:
    assert unsubscribe_uris(value) == uris


@pytest.mark.parametrize(
    ("value", "one_click"),
    [
        ("List-Unsubscribe=One-Click", True),
        (" List-Unsubscribe=One-Click ", True),
        ("list-unsubscribe=one-click", True),
        ("List-Unsubscribe = One-Click", True),
        ("List-Unsubscribe=One-Click-X", False),
        ("One-Click", False),
        ("", False),
    ],
)
def test_post_field(value: str, one_click: bool) -> None:
    assert listheaders.is_one_click(value) is one_click


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("<kasan-dev.googlegroups.com>", ListId("kasan-dev.googlegroups.com", None)),
        ('"Python-Dev" <python-dev.python.org>', ListId("python-dev.python.org", "Python-Dev")),
        (
            "=?UTF-8?Q?Novinky_obchodu_=C5=A0umava?= <novinky.sumava.example>",
            ListId("novinky.sumava.example", "Novinky obchodu Šumava"),
        ),
        ("bare.id.example", ListId("bare.id.example", None)),
        ("two words", None),
        ("<>", None),
        ("", None),
    ],
)
def test_list_id_forms(value: str, expected: ListId | None) -> None:
    assert list_id(value) == expected


# --------------------------------------------------------------------------- mailto


def test_mailto_percent_decoding_and_fields() -> None:
    found = mailto("mailto:list-request%2Bx@host.example?subject=unsubscribe%20me&body=unsubscribe%0D%0Alist%20%C5%A1")
    assert found is not None
    assert found.addresses == ("list-request+x@host.example",)
    assert found.subject == "unsubscribe me" and found.body == "unsubscribe\r\nlist š"
    assert not found.cc_or_bcc and found.other_fields == ()


def test_mailto_with_several_recipients_says_so() -> None:
    several = mailto("mailto:a@x.example,b@y.example?to=c@z.example&cc=d@w.example&In-Reply-To=%3C1@x%3E")
    assert several is not None
    assert several.addresses == ("a@x.example", "b@y.example", "c@z.example")
    assert several.cc_or_bcc and several.other_fields == ("in-reply-to",)
    assert several.subject is None and several.body is None
    assert mailto("https://x.example/") is None
    bare = mailto("MAILTO:u@x.example")
    assert bare is not None and bare.addresses == ("u@x.example",)


# --------------------------------------------------------------------------- DKIM-Signature


def test_signature_tags_folded_inside_values() -> None:
    facts_block = header_of(REPORT, RETURNED)
    from mcp_multi_gmail.gmail.parse.authresults import ordered_headers

    [value] = [v for name, v in ordered_headers(facts_block) if name == "dkim-signature"]
    sig = dkim.signature(value)
    assert sig is not None
    assert (sig.domain, sig.selector) == ("blah.com", "2010")
    assert sig.signed[-1] == "list-unsubscribe" and "content-type" in sig.signed  # "Content-Type" after a fold
    assert sig.b.startswith("aw+Bhd8t1goZUXWBAHSrHaM1IdqhkXqF5") and " " not in sig.b


def test_signature_identity_domain_is_quoted_printable() -> None:
    block = header_of("mail-parser/mail_test_13")
    from mcp_multi_gmail.gmail.parse.authresults import ordered_headers

    [value] = [v for name, v in ordered_headers(block) if name == "dkim-signature"]
    sig = dkim.signature(value)
    assert sig is not None and sig.domain == "mail90.suw15.mcsv.net" and sig.selector == "k1"
    assert sig.identity_domain == "mail90.suw15.mcsv.net"
    assert sig.covers("list-unsubscribe") and sig.covers("list-id") and not sig.covers("list-unsubscribe-post")


def test_signature_refusals_and_counts() -> None:
    assert dkim.signature("v=1; d=x.example; s=s1; b=abc") is None  # no h=
    assert dkim.signature("v=1; d=x.example; d=y.example; s=s1; h=from; b=abc") is None  # a repeated tag
    assert dkim.signature("v=1; d=x.example; s=s1; h=from; b=") is None
    twice = dkim.signature("v=1; d=X.Example; s=S1; h=From : List-Unsubscribe:list-unsubscribe; b=ab c=")
    assert twice is not None and (twice.domain, twice.selector, twice.b) == ("x.example", "s1", "abc=")
    assert twice.covers("list-unsubscribe", 2) and not twice.covers("list-unsubscribe", 3)
    assert not twice.covers("list-unsubscribe", 0)


def test_a_result_speaks_of_a_signature_by_domain_selector_and_b_prefix() -> None:
    sig = dkim.Signature("news.example", "s1", ("list-unsubscribe",), "AbCdEfGh123", "mail.news.example")
    assert dkim.speaks_of(DkimResult("pass", "news.example", "s1", "AbCdEfGh"), sig)
    assert dkim.speaks_of(DkimResult("pass", "mail.news.example", "S1", None), sig)  # header.i's domain = i='s
    assert not dkim.speaks_of(DkimResult("pass", "news.example", "s1", "AbCdEfGX"), sig)
    assert not dkim.speaks_of(DkimResult("pass", "news.example", "s2", None), sig)
    assert not dkim.speaks_of(DkimResult("pass", "other.example", "s1", None), sig)
    assert not dkim.speaks_of(DkimResult("pass", "news.example", None, None), sig)  # no header.s names none
    assert dkim.passed([DkimResult("fail", "news.example", "s1", None)], [sig]) == []


# --------------------------------------------------------------------------- Gmail's verdict

GMAIL_TRACE = (
    b"Received: by 2002:a05:6a10:1a4d:0:0:0:0 with SMTP id x1csp1;\r\n        Mon, 6 Jul 2026 03:47:54 -0700 (PDT)\r\n"
    b"ARC-Authentication-Results: i=1; mx.google.com;\r\n"
    b"       dkim=pass header.i=@news.example header.s=s1 header.b=AbCdEfGh\r\n"
    b"Return-Path: <bounce@news.example>\r\n"
    b"Received: from mail.news.example (mail.news.example. [198.51.100.7])\r\n"
    b"        by mx.google.com with ESMTPS id a1si1;\r\n        Mon, 6 Jul 2026 03:47:54 -0700 (PDT)\r\n"
    b"Received-SPF: pass (google.com: domain of bounce@news.example designates 198.51.100.7 as permitted sender)"
    b" client-ip=198.51.100.7;\r\n"
)


def test_gmail_results_several_signatures_quoted_b() -> None:
    block = GMAIL_TRACE + (
        b"Authentication-Results: mx.google.com;\r\n"
        b'       dkim=pass header.i=@news.example header.s=s1 header.b="Ab/dEfGh";\r\n'
        b"       dkim=fail header.i=@esp.example header.s=esp header.b=ZZZZZZZZ;\r\n"
        b"       spf=pass smtp.mailfrom=bounce@news.example\r\n\r\n"
    )
    assert gmail_dkim_results(block) == [
        DkimResult("pass", "news.example", "s1", "Ab/dEfGh"),
        DkimResult("fail", "esp.example", "esp", "ZZZZZZZZ"),
    ]


def test_gmail_result_without_selector_as_gmail_wrote_in_2015() -> None:
    results = gmail_dkim_results(header_of("mimekit/dkim-gmail.msg"))
    assert results == [DkimResult("pass", "gmail.com", None, None)]


def test_a_verdict_without_gmails_trace_or_from_another_host_is_none() -> None:
    claimed = b"Authentication-Results: mx.google.com; dkim=pass header.i=@news.example header.s=s1\r\n\r\n"
    assert gmail_dkim_results(claimed) is None  # a sender can write the header, not the trace above it
    other = (
        GMAIL_TRACE + b"Authentication-Results: mx.example.net; dkim=pass header.i=@news.example header.s=s1\r\n\r\n"
    )
    assert gmail_dkim_results(other) is None


def test_facts_link_gmails_pass_to_the_signature_that_covers_the_fields() -> None:
    block = GMAIL_TRACE + (
        b"Authentication-Results: mx.google.com;\r\n"
        b"       dkim=pass header.i=@news.example header.s=s1 header.b=AbCdEfGh;\r\n"
        b"       dkim=pass header.i=@esp.example header.s=e1 header.b=QQQQQQQQ\r\n"
        b"DKIM-Signature: v=1; a=rsa-sha256; d=esp.example; s=e1; h=from:subject; b=QQQQQQQQrest\r\n"
        b"DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=news.example; s=s1;\r\n"
        b"\th=from:subject:list-unsubscribe:list-unsubscribe-post; bh=x=;\r\n\tb=AbCdEfGhIjKl\r\n\t mNoP\r\n"
        b"List-Unsubscribe: <https://news.example/u/1>, <mailto:leave@news.example?subject=stop>\r\n"
        b"List-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n"
        b'From: "News" <News@News.Example>\r\n\r\n'
    )
    facts = list_facts(block)
    assert facts.gmail_verdict and facts.dkim_results == ("pass", "pass")
    assert [s.domain for s in facts.matched] == ["esp.example", "news.example"]
    signer = facts.signed_by("list-unsubscribe", "list-unsubscribe-post")
    assert signer is not None and signer.domain == "news.example"
    assert facts.sender == "news@news.example" and facts.sender_name == "News"
    # A second List-Unsubscribe field above it is not covered by a signature that signs one.
    doubled = list_facts(
        block.replace(
            b"List-Unsubscribe: <https", b"List-Unsubscribe: <https://evil.example/>\r\nList-Unsubscribe: <https"
        )
    )
    assert doubled.unsubscribe_fields == 2 and doubled.signed_by("list-unsubscribe") is None
