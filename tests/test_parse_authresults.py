"""Gmail's Authentication-Results verdict (gmail/parse/authresults.py): which header is trusted, and
what SPF, DKIM and DMARC said for the sender's domain."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcp_multi_gmail.domain import Authentication
from mcp_multi_gmail.gmail.parse.authresults import authentication

GMAIL_PASS = (
    b"Authentication-Results: mx.google.com;\r\n"
    b"       dkim=pass header.i=@example.com header.s=20230601 header.b=AbC+dEf=;\r\n"
    b"       spf=pass (google.com: domain of bob@example.com designates 203.0.113.5 as permitted sender)"
    b" smtp.mailfrom=bob@example.com;\r\n"
    b"       dmarc=pass (p=NONE sp=NONE dis=NONE) header.from=example.com\r\n"
)
GMAIL_FAIL = (
    b"Authentication-Results: mx.google.com;\r\n"
    b"       spf=softfail (google.com: domain of transitioning x@bank.example does not designate 198.51.100.7"
    b" as permitted sender) smtp.mailfrom=x@bank.example;\r\n"
    b"       dmarc=fail (p=REJECT sp=REJECT dis=QUARANTINE) header.from=bank.example\r\n"
)
# Gmail's own delivery trace, as it stands above its verdict on a delivered message.
FINAL_HOP = (
    b"Received: from mail.example.com (mail.example.com. [203.0.113.5])\r\n"
    b"        by mx.google.com with ESMTPS id a1si123.45.2026.11.30.07.00.00\r\n"
    b"        for <jana@example.cz>; Mon, 30 Nov 2026 07:00:00 -0800 (PST)\r\n"
)
SPF_LINE = (
    b"Received-SPF: pass (google.com: domain of bob@example.com designates 203.0.113.5 as permitted sender)"
    b" client-ip=203.0.113.5;\r\n"
)
ARC_RESULTS = b"ARC-Authentication-Results: i=1; mx.google.com;\r\n       spf=pass smtp.mailfrom=bob@example.com\r\n"
TRACE = FINAL_HOP + SPF_LINE
FORGED_OTHER_HOST = (
    b"Authentication-Results: evil.example;\r\n"
    b"       spf=pass smtp.mailfrom=x@bank.example; dkim=pass header.d=bank.example; dmarc=pass\r\n"
)
FORGED_GMAIL = (
    b"Authentication-Results: mx.google.com;\r\n"
    b"       spf=pass smtp.mailfrom=x@bank.example; dkim=pass header.i=@bank.example; dmarc=pass\r\n"
)


def test_normal_gmail_header() -> None:
    assert authentication(TRACE + GMAIL_PASS + b"\r\n", "bob@example.com") == Authentication(
        spf="pass", dkim="pass", dmarc="pass", dkim_domain="example.com", dkim_aligned=True, other_reports=0
    )


def test_forged_header_from_another_host_above_is_ignored_and_counted() -> None:
    result = authentication(TRACE + FORGED_OTHER_HOST + GMAIL_FAIL + b"\r\n", "x@bank.example")
    assert result == Authentication(spf="softfail", dkim=None, dmarc="fail", other_reports=1)


def test_forged_gmail_header_below_the_topmost_is_ignored_and_counted() -> None:
    result = authentication(TRACE + GMAIL_FAIL + FORGED_GMAIL + FORGED_OTHER_HOST + b"\r\n", "x@bank.example")
    assert result == Authentication(spf="softfail", dkim=None, dmarc="fail", other_reports=2)


def test_no_gmail_header_is_unchecked() -> None:
    assert authentication(b"", "me@example.com") == Authentication(unchecked=True)
    assert authentication(b"\r\n", None) == Authentication(unchecked=True)
    assert authentication(FORGED_OTHER_HOST + b"\r\n", "x@bank.example") == Authentication(
        unchecked=True, other_reports=1
    )
    # a look-alike authserv-id or one with trailing words is not Gmail's
    lookalikes = (
        b"Authentication-Results: mx.google.com.evil.example; spf=pass\r\n"
        b"Authentication-Results: mx.google.com evil; spf=pass\r\n"
        b"Authentication-Results: x.mx.google.com; spf=pass\r\n"
    )
    assert authentication(lookalikes, "a@b.example") == Authentication(unchecked=True, other_reports=3)


def test_dkim_parent_domain_aligns() -> None:
    header = b"Authentication-Results: mx.google.com; dkim=pass header.d=example.com header.s=k; spf=none\r\n"
    result = authentication(TRACE + header, "noreply@mail.example.com")
    assert (result.dkim, result.dkim_domain, result.dkim_aligned, result.spf) == ("pass", "example.com", True, "none")
    # and the child of the From domain as well
    header = b"Authentication-Results: mx.google.com; dkim=pass header.i=@mail.example.com\r\n"
    assert authentication(TRACE + header, "a@Example.COM").dkim_aligned is True


@pytest.mark.parametrize("signer", [b"mailer.example.net", b"notexample.com", b"com"])
def test_unrelated_dkim_domain_is_not_aligned(signer: bytes) -> None:
    header = b"Authentication-Results: mx.google.com; dkim=pass header.d=" + signer + b"\r\n"
    result = authentication(TRACE + header, "ceo@example.com")
    assert (result.dkim, result.dkim_domain, result.dkim_aligned) == ("pass", signer.decode(), False)


def test_garbage_tokens_become_none() -> None:
    header = (
        b"Authentication-Results: mx.google.com; spf=maybe smtp.mailfrom=a@b.example;"
        b" dkim=<script> header.d=b.example; dmarc=PASS!!; arc=pass; none\r\n"
    )
    result = authentication(TRACE + header, "a@b.example")
    assert result == Authentication(spf=None, dkim=None, dmarc=None)


def test_tokens_are_case_insensitive_and_validated() -> None:
    header = b"authentication-results: MX.Google.COM 1; SPF=PermError; DKIM=TempError; DMARC=BestGuessPass\r\n"
    expected = Authentication(spf="permerror", dkim="temperror", dmarc="bestguesspass")
    assert authentication(TRACE + header, None) == expected


def test_several_dkim_results_prefer_an_aligned_pass() -> None:
    header = (
        b"Authentication-Results: mx.google.com;\r\n"
        b"\tdkim=fail header.i=@example.com;\r\n"
        b"\tdkim=pass header.i=@esp.example.net header.s=s;\r\n"
        b"\tdkim=pass header.i=@example.com header.s=t;\r\n"
        b"\tspf=pass smtp.mailfrom=bounce@esp.example.net\r\n"
    )
    result = authentication(TRACE + header, "news@example.com")
    assert (result.dkim, result.dkim_domain, result.dkim_aligned) == ("pass", "example.com", True)
    # a pass that does not align is still reported as the pass it is
    result = authentication(TRACE + header, "someone@other.example")
    assert (result.dkim, result.dkim_domain, result.dkim_aligned) == ("pass", "esp.example.net", False)


def test_dkim_without_pass_has_no_domain() -> None:
    header = b"Authentication-Results: mx.google.com; dkim=neutral (no key) header.i=@example.com; dkim=fail\r\n"
    result = authentication(TRACE + header, "a@example.com")
    assert (result.dkim, result.dkim_domain, result.dkim_aligned) == ("neutral", None, None)


def test_dkim_pass_without_from_address_is_not_aligned() -> None:
    assert authentication(TRACE + GMAIL_PASS, None).dkim_aligned is False


def test_comments_with_semicolons_and_nesting() -> None:
    header = (
        b"Authentication-Results: (outer (nested; x) comment) mx.google.com (note);\r\n"
        b' spf=pass (a; dmarc=fail (b)) smtp.mailfrom="a;b"@x.example; dmarc=none\r\n'
    )
    assert authentication(TRACE + header, "a@x.example") == Authentication(spf="pass", dmarc="none")


def test_a_gmail_verdict_without_gmail_trace_above_it_is_not_trusted() -> None:
    """Mail imported over IMAP, or a sender's forged header: no delivery trace from Gmail above."""
    assert authentication(FORGED_GMAIL + b"\r\n", "x@bank.example") == Authentication(unchecked=True, other_reports=1)
    # the trace below the verdict is the sender's own text, not Gmail's
    below = FORGED_GMAIL + TRACE + b"\r\n"
    assert authentication(below, "x@bank.example") == Authentication(unchecked=True, other_reports=1)
    # the final hop alone, or Received-SPF alone, is not the whole trace
    assert authentication(FINAL_HOP + FORGED_GMAIL, "x@bank.example").unchecked is True
    assert authentication(SPF_LINE + FORGED_GMAIL, "x@bank.example").unchecked is True
    # a Received line that only mentions Gmail somewhere else is not Gmail's hop
    near = b"Received: from mx.google.com by evil.example; Mon, 30 Nov 2026 07:00:00 +0000\r\n" + SPF_LINE
    assert authentication(near + FORGED_GMAIL, "x@bank.example").unchecked is True


def test_gmail_trace_with_arc_results_instead_of_received_spf() -> None:
    block = ARC_RESULTS + FINAL_HOP + GMAIL_PASS + b"\r\n"
    assert authentication(block, "bob@example.com").dkim == "pass"
    # the ARC results of another host do not stand in for Gmail's
    other_arc = b"ARC-Authentication-Results: i=1; relay.example.net; spf=pass\r\n"
    assert authentication(other_arc + FINAL_HOP + GMAIL_PASS, "bob@example.com").unchecked is True


def test_other_headers_in_the_block_are_ignored() -> None:
    block = TRACE + b"X-Other: mx.google.com; spf=fail\r\n" + GMAIL_PASS + b"\r\n"
    assert authentication(block, "bob@example.com").spf == "pass"


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300), st.one_of(st.none(), st.text(max_size=30)))
def test_authentication_never_raises(block: bytes, sender: str | None) -> None:
    result = authentication(b"Authentication-Results: mx.google.com; " + block, sender)
    assert result.spf in {None, "pass", "fail", "softfail", "none", "neutral", "temperror", "permerror",
                          "policy", "bestguesspass"}  # fmt: skip
