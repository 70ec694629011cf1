"""The policy's unsubscribe rules (policy/unsubscribing.py): may this mailbox leave lists, may this
one-click or this mailto opt-out go ahead on what the message's header and Gmail's verdict say.
Every refusal is checked for its code and its reason, at the boundary of each rule."""

from __future__ import annotations

from dataclasses import replace
from ipaddress import ip_address

import pytest

from mcp_multi_gmail import policy
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.parse.dkim import Signature
from mcp_multi_gmail.gmail.parse.listheaders import ListFacts, ListId
from mcp_multi_gmail.gmail.web import OneClickTarget

BOTH = Signature("news.example", "s1", ("from", "subject", "list-unsubscribe", "list-unsubscribe-post"), "AbCd")
ONLY_LIST_UNSUBSCRIBE = Signature("news.example", "s1", ("from", "list-unsubscribe"), "AbCd")
ONLY_POST = Signature("esp.example", "e1", ("list-unsubscribe-post",), "QqQq")
HTTPS = "https://news.example/u/1?t=abc"
NOT_URL_CHARS = "the URL holds characters a URL cannot (RFC 3986): a space, a control, a backslash or non-ASCII text"
MAILTO = "mailto:leave@news.example?subject=stop%20it&body=unsubscribe%20me"

GOOD = ListFacts(
    list_id=ListId("weekly.news.example", "Weekly"),
    sender="editor@news.example",
    sender_name="News",
    unsubscribe_fields=1,
    uris=(HTTPS, MAILTO),
    post_fields=1,
    one_click_post=True,
    gmail_verdict=True,
    dkim_results=("pass",),
    matched=(BOTH,),
)


def refused(check: object, *args: object) -> MailError:
    with pytest.raises(MailError) as raised:
        check(*args)  # type: ignore[operator]
    return raised.value


# --------------------------------------------------------------------------- the permission


def test_can_unsubscribe_off_refuses_and_on_allows() -> None:
    error = refused(policy.check_can_unsubscribe, "o", False)
    assert error.code == "unsubscribe_refused" and not error.retryable
    assert 'Mailbox "o"' in error.message and "can_unsubscribe" in error.message
    assert "Nothing was contacted and nothing was sent" in error.message
    policy.check_can_unsubscribe("o", True)  # allowed: no error


# --------------------------------------------------------------------------- one-click


def test_one_click_allowed_when_every_rule_holds() -> None:
    assert policy.why_not_one_click(GOOD) is None
    assert policy.check_one_click("o", GOOD) == OneClickTarget("news.example", "/u/1?t=abc")


def test_the_first_https_uri_is_the_one_used() -> None:
    later = replace(GOOD, uris=(MAILTO, "http://news.example/x", HTTPS, "https://other.example/u"))
    assert policy.check_one_click("o", later).shown == "https://news.example/u/1"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"unsubscribe_fields": 0, "uris": ()}, "no List-Unsubscribe field"),
        ({"unsubscribe_fields": 2}, "several List-Unsubscribe fields"),
        ({"uris": (MAILTO,)}, "no https: URI in List-Unsubscribe"),
        ({"uris": ("http://news.example/u/1", MAILTO)}, "only an http: URI, not https:"),
        ({"post_fields": 0, "one_click_post": False}, "no List-Unsubscribe-Post field"),
        ({"one_click_post": False}, "List-Unsubscribe-Post does not say List-Unsubscribe=One-Click"),
        ({"uris": ("https://news.example:8443/u",)}, "the URL names port 8443, not 443"),
        ({"uris": ("https://news.example:80/u",)}, "the URL names port 80, not 443"),
        ({"uris": ("https://user:pw@news.example/u",)}, "the URL carries a user name or password"),
        ({"uris": ("https://user@news.example/u",)}, "the URL carries a user name or password"),
        ({"uris": ("https://@news.example/u",)}, "the URL carries a user name or password"),
        ({"uris": ("https:///u",)}, "the URL names no host"),
        ({"uris": ("https://news.example:99999/u",)}, "the URL cannot be read"),
        (
            {"uris": ("https://news.example/\u00fcnsubscribe",)},
            NOT_URL_CHARS,
        ),
        (
            {"uris": ("https://10.0.0.1/u",)},
            "the URL's host is the address 10.0.0.1, private-use (10.0.0.0/8, RFC 1918)",
        ),
        ({"uris": ("https://[::1/u",)}, "the URL cannot be read"),
        (
            {"uris": ("https://news.example/u\u00a0x",)},
            NOT_URL_CHARS,
        ),
        (
            {"uris": ("https://news.example/u\x7f",)},
            NOT_URL_CHARS,
        ),
        ({"gmail_verdict": False, "dkim_results": (), "matched": ()}, "no DKIM verdict of Gmail's own (mx.google.com)"),
        ({"dkim_results": ("fail",), "matched": ()}, "DKIM did not pass (dkim=fail)"),
        ({"dkim_results": ("neutral", "fail"), "matched": ()}, "DKIM did not pass (dkim=neutral)"),
        ({"dkim_results": (), "matched": ()}, "no DKIM result"),
        ({"matched": ()}, "no DKIM-Signature field matches Gmail's passing result"),
        ({"matched": (ONLY_POST,)}, "the passing DKIM signature does not cover List-Unsubscribe"),
        ({"matched": (ONLY_LIST_UNSUBSCRIBE,)}, "the passing DKIM signature does not cover List-Unsubscribe-Post"),
        # two signatures that cover one field each: no one signature vouches for both
        (
            {"matched": (ONLY_LIST_UNSUBSCRIBE, ONLY_POST)},
            "the passing DKIM signature does not cover List-Unsubscribe-Post",
        ),
        # a second Post field that the signature does not count
        ({"post_fields": 2}, "the passing DKIM signature does not cover List-Unsubscribe-Post"),
    ],
)
def test_one_click_refusals(change: dict[str, object], reason: str) -> None:
    facts = replace(GOOD, **change)  # type: ignore[arg-type]
    assert policy.why_not_one_click(facts) == reason
    error = refused(policy.check_one_click, "o", facts)
    assert error.code == "unsubscribe_refused" and not error.retryable
    assert f": {reason}." in error.message and "Nothing was contacted" in error.message and '"o"' in error.message


def test_one_click_port_443_and_passes_with_fail_beside_it() -> None:
    assert policy.check_one_click("o", replace(GOOD, uris=("https://news.example:443/u",))).shown == (
        "https://news.example/u"
    )
    # Gmail failed another signature; the passing one that covers both fields is enough.
    assert policy.why_not_one_click(replace(GOOD, dkim_results=("fail", "pass"))) is None
    twice = Signature("news.example", "s1", ("list-unsubscribe", "list-unsubscribe-post", "list-unsubscribe-post"), "A")
    assert policy.why_not_one_click(replace(GOOD, post_fields=2, matched=(twice,))) is None


# --------------------------------------------------------------------------- the one rule for a URL

A = ip_address  # the literal a target carries

URL_FORMS: list[tuple[str, OneClickTarget | str]] = [
    ("https://news.example/u?id=1&list=a", OneClickTarget("news.example", "/u?id=1&list=a")),
    ("https://news.example", OneClickTarget("news.example", "/")),
    ("https://news.example?x=1", OneClickTarget("news.example", "/?x=1")),
    ("https://news.example/u?", OneClickTarget("news.example", "/u")),
    ("https://NEWS.Example/u", OneClickTarget("news.example", "/u")),
    ("HTTPS://news.example/u", OneClickTarget("news.example", "/u")),
    ("https://news.example:443/u", OneClickTarget("news.example", "/u")),
    ("https://news.example/u#fragment", OneClickTarget("news.example", "/u")),
    ("https://news.example/a%20b?x=%C3%BC", OneClickTarget("news.example", "/a%20b?x=%C3%BC")),
    ("https://xn--bcher-kva.example/u", OneClickTarget("xn--bcher-kva.example", "/u")),
    ("https://_dmarc.news.example/u", OneClickTarget("_dmarc.news.example", "/u")),
    ("https://93.184.216.34/u", OneClickTarget("93.184.216.34", "/u", A("93.184.216.34"))),
    ("https://[2606:4700::1111]/u", OneClickTarget("2606:4700::1111", "/u", A("2606:4700::1111"))),
    ("https://news.example/" + "a" * 7979, OneClickTarget("news.example", "/" + "a" * 7979)),
    ("https://news.example/" + "a" * 7980, "the URL is 8001 characters long, over 8000"),
    (
        "https://news.example/\u00fcnsubscribe",
        NOT_URL_CHARS,
    ),
    (
        "https://news.example/u?name=J\u00fcrgen",
        NOT_URL_CHARS,
    ),
    (
        "https://b\u00fccher.example/u",
        NOT_URL_CHARS,
    ),
    (
        "https://news.example/a b",
        NOT_URL_CHARS,
    ),
    (
        "https://news.example/a|b",
        NOT_URL_CHARS,
    ),
    (
        "https://news.example\\@evil.example/u",
        NOT_URL_CHARS,
    ),
    (
        "https://news.example/\r\nX: 1",
        NOT_URL_CHARS,
    ),
    ("http://news.example/u", "the URL's scheme is http, not https"),
    ("//news.example/u", "the URL's scheme is missing, not https"),
    ("https://user@news.example/u", "the URL carries a user name or password"),
    ("https://user:pw@news.example/u", "the URL carries a user name or password"),
    ("https://news.example:8443/u", "the URL names port 8443, not 443"),
    ("https://news.example:0/u", "the URL names port 0, not 443"),
    ("https://news.example:/u", OneClickTarget("news.example", "/u")),
    ("https://news.example:99999/u", "the URL cannot be read"),
    ("https://[::1/u", "the URL cannot be read"),
    ("https:///u", "the URL names no host"),
    ("https://news.example./u", "the URL's host news.example. is not a host name or an IP address"),
    ("https://-news.example/u", "the URL's host -news.example is not a host name or an IP address"),
    ("https://127.1/u", "the URL's host 127.1 is not a host name or an IP address"),
    ("https://2130706433/u", "the URL's host 2130706433 is not a host name or an IP address"),
    ("https://[v1.news]/u", "the URL's host v1.news is not a host name or an IP address"),
    ("https://n%65ws.example/u", "the URL's host n%65ws.example is not a host name or an IP address"),
    ("https://127.0.0.1/u", "the URL's host is the address 127.0.0.1, loopback (127.0.0.0/8, RFC 1122)"),
    ("https://169.254.169.254/x", "the URL's host is the address 169.254.169.254, link-local"),
    ("https://[::1]/u", "the URL's host is the address ::1, loopback (::1/128, RFC 4291)"),
    ("https://[::ffff:8.8.8.8]/u", "the URL's host is the address ::ffff:808:808, IPv4-mapped"),
    ("https://[fe80::1]/u", "the URL's host is the address fe80::1, link-local"),
]


@pytest.mark.parametrize(("url", "decided"), URL_FORMS, ids=[u[:50] for u, _ in URL_FORMS])
def test_the_one_rule_for_a_url(url: str, decided: OneClickTarget | str) -> None:
    found = policy.one_click_target(url)
    if isinstance(decided, str):
        assert isinstance(found, str) and found.startswith(decided), found
    else:
        assert found == decided
    # The overview and the call decide with it alike.
    facts = replace(GOOD, uris=(url,) if url.lower().startswith("https:") else ())
    if facts.uris:
        assert policy.why_not_one_click(facts) == (found if isinstance(found, str) else None)


# --------------------------------------------------------------------------- mailto


def test_mailto_allowed_with_the_urls_own_subject_and_body() -> None:
    assert policy.why_not_mailto(GOOD) is None
    assert policy.check_mailto("o", GOOD) == policy.OptOut("leave@news.example", "stop it", "unsubscribe me")


@pytest.mark.parametrize(
    ("uri", "subject", "body"),
    [
        ("mailto:leave@news.example", "unsubscribe", "unsubscribe"),
        ("mailto:leave@news.example?subject=unsubscribe", "unsubscribe", "unsubscribe"),
        ("mailto:leave@news.example?subject=&body=%20", "unsubscribe", "unsubscribe"),
        ("mailto:leave@news.example?body=leave%0D%0Aend", "unsubscribe", "leave\r\nend"),
        ("mailto:%20leave@news.example%20?subject=x", "x", "unsubscribe"),
    ],
)
def test_mailto_defaults_to_unsubscribe(uri: str, subject: str, body: str) -> None:
    opt_out = policy.check_mailto("o", replace(GOOD, uris=(uri,), post_fields=0, one_click_post=False))
    assert opt_out == policy.OptOut("leave@news.example", subject, body)


def test_mailto_needs_no_post_field_and_no_https() -> None:
    # Mailman: a web options page and a mailto to -request, no Post field, signed.
    mailman = replace(
        GOOD,
        uris=("http://lists.example/mailman/options/x", "mailto:x-request@lists.example?subject=unsubscribe"),
        post_fields=0,
        one_click_post=False,
        matched=(replace(ONLY_LIST_UNSUBSCRIBE, domain="lists.example"),),
    )
    assert policy.why_not_one_click(mailman) == "only an http: URI, not https:"
    assert policy.check_mailto("o", mailman).address == "x-request@lists.example"


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"unsubscribe_fields": 0, "uris": ()}, "no List-Unsubscribe field"),
        ({"unsubscribe_fields": 2}, "several List-Unsubscribe fields"),
        ({"uris": (HTTPS,)}, "no mailto: URI in List-Unsubscribe"),
        ({"uris": ("mailto:?subject=x",)}, "the mailto: URL names no address"),
        ({"uris": ("mailto:a@x.example,b@x.example",)}, "the mailto: URL names more than one recipient"),
        ({"uris": ("mailto:a@x.example?to=b@x.example",)}, "the mailto: URL names more than one recipient"),
        ({"uris": ("mailto:a@x.example?cc=b@x.example",)}, "the mailto: URL names more than one recipient"),
        ({"uris": ("mailto:a@x.example?bcc=b@x.example",)}, "the mailto: URL names more than one recipient"),
        ({"uris": ("mailto:Name%20%3Ca@x.example%3E",)}, "the mailto: address is not a plain e-mail address"),
        (
            {"uris": ("mailto:a@x.example?subject=a%0D%0ABcc:%20c@evil.example",)},
            "the mailto: subject is not one short header line",
        ),
        ({"uris": ("mailto:a@x.example?subject=" + "s" * 999,)}, "the mailto: subject is not one short header line"),
        ({"uris": ("mailto:a@x.example?body=a%00b",)}, "the mailto: body holds control characters or is too long"),
        (
            {"uris": ("mailto:a@x.example?body=" + "b" * 10_001,)},
            "the mailto: body holds control characters or is too long",
        ),
        ({"gmail_verdict": False, "dkim_results": (), "matched": ()}, "no DKIM verdict of Gmail's own (mx.google.com)"),
        ({"dkim_results": ("fail",), "matched": ()}, "DKIM did not pass (dkim=fail)"),
        ({"matched": ()}, "no DKIM-Signature field matches Gmail's passing result"),
        ({"matched": (ONLY_POST,)}, "the passing DKIM signature does not cover List-Unsubscribe"),
    ],
)
def test_mailto_refusals(change: dict[str, object], reason: str) -> None:
    facts = replace(GOOD, **change)  # type: ignore[arg-type]
    assert policy.why_not_mailto(facts) == reason
    error = refused(policy.check_mailto, "o", facts)
    assert error.code == "unsubscribe_refused" and not error.retryable
    assert f": {reason}." in error.message and "Nothing was sent" in error.message and '"o"' in error.message


def test_mailto_limits_are_inclusive() -> None:
    longest = replace(GOOD, uris=("mailto:a@news.example?subject=" + "s" * 998 + "&body=" + "b" * 10_000,))
    opt_out = policy.check_mailto("o", longest)
    assert len(opt_out.subject) == 998 and len(opt_out.body) == 10_000
    tab = replace(GOOD, uris=("mailto:a@news.example?subject=a%09b&body=x%09y",))
    assert policy.check_mailto("o", tab) == policy.OptOut("a@news.example", "a\tb", "x\ty")


# A hostile sender can sign its own header: the signature proves who wrote the mailto, not that the
# address is theirs. The opt-out goes only to the signer's domain or below it, never to a third party.
@pytest.mark.parametrize(
    "address",
    ["leave@news.example", "leave@NEWS.example", "x-request@lists.news.example", "a@b.c.news.example"],
)
def test_mailto_to_the_signing_domain_or_below_it_is_allowed(address: str) -> None:
    facts = replace(GOOD, uris=(f"mailto:{address}?subject=unsubscribe",))
    assert policy.why_not_mailto(facts) is None
    assert policy.check_mailto("o", facts).address == address


@pytest.mark.parametrize(
    "address",
    [
        "boss@company.example",  # a third party, with the hostile sender's own subject and body
        "leave@example",  # the signer's parent domain
        "leave@badnews.example",  # ends with the signer's name, but not on a label boundary
        "leave@news.example.evil",  # starts with it
    ],
)
def test_mailto_outside_the_signing_domain_is_refused(address: str) -> None:
    facts = replace(GOOD, uris=(f"mailto:{address}?subject=I%20quit&body=see%20attached",))
    reason = "the mailto: address is outside the domain that signed the header (news.example)"
    assert policy.why_not_mailto(facts) == reason
    error = refused(policy.check_mailto, "o", facts)
    assert (
        error.code == "unsubscribe_refused" and f": {reason}." in error.message and "Nothing was sent" in error.message
    )


def test_mailto_may_go_to_any_passing_signer_that_covers_the_field() -> None:
    # Mailchimp-like: the customer's domain and the sending service both sign; the address is the service's.
    customer = replace(BOTH, domain="shop.example")
    service = replace(ONLY_LIST_UNSUBSCRIBE, domain="mcsv.example")
    facts = replace(GOOD, uris=("mailto:unsubscribe-1@mailin.mcsv.example",), matched=(customer, service))
    assert policy.check_mailto("o", facts).address == "unsubscribe-1@mailin.mcsv.example"
    # A signer that does not cover List-Unsubscribe vouches for nothing here.
    uncovering = replace(ONLY_POST, domain="mcsv.example")
    only_post = replace(facts, matched=(customer, uncovering))
    assert policy.why_not_mailto(only_post) == (
        "the mailto: address is outside the domain that signed the header (shop.example)"
    )


def test_mailto_refusal_names_every_signer() -> None:
    two = (replace(BOTH, domain="b.example"), replace(ONLY_LIST_UNSUBSCRIBE, domain="a.example"))
    facts = replace(GOOD, uris=("mailto:leave@c.example",), matched=two)
    assert policy.why_not_mailto(facts) == (
        "the mailto: address is outside the domain that signed the header (a.example, b.example)"
    )
