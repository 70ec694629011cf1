"""Table-driven tests of the sending rules (policy/sending.py), hostile inputs first: may this
mailbox send, to whom, from which alias, with which header values, and how large a message may be."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from mcp_multi_gmail.policy import (
    MAX_MESSAGE_BYTES,
    check_can_send,
    check_has_to,
    check_header_value,
    check_message_size,
    check_recipients,
    resolve_attachments,
    resolve_sender,
)
from policy_refusals import refused

# --- can_send ------------------------------------------------------------------------------


def test_can_send_true_passes() -> None:
    check_can_send("work", True)


def test_can_send_false_refuses_without_suggesting_to_enable() -> None:
    err = refused(lambda: check_can_send("work", False), "send_forbidden", '"work"', "Nothing was sent")
    assert "enable it" not in err.message.lower()


# --- recipients ----------------------------------------------------------------------------

EXACT = ("a@partner.example",)
DOMAIN = ("@partner.example",)


@pytest.mark.parametrize(
    ("allowed", "recipients"),
    [
        (None, ["anyone@anywhere.example"]),
        (EXACT, ["a@partner.example"]),
        (EXACT, ["A@Partner.Example"]),
        (EXACT, ["  a@partner.example  "]),
        (DOMAIN, ["A@Partner.Example"]),
        (DOMAIN, ["b@partner.example", "c@PARTNER.example"]),
        (("  @Partner.Example ",), ["b@partner.example"]),
        (("x@other.example", "@partner.example"), ["x@other.example", "y@partner.example"]),
        (("@x",), ["a@x"]),
        (("@partner.example", "@x"), ["a@x", "b@partner.example"]),
    ],
    ids=[
        "none-means-anybody",
        "exact",
        "exact-case-insensitive",
        "exact-trimmed",
        "domain-case-insensitive",
        "domain-several",
        "domain-entry-trimmed-and-cased",
        "mixed-entries",
        "one-letter-domain",
        "two-domain-entries",
    ],
)
def test_recipients_allowed(allowed: Sequence[str] | None, recipients: list[str]) -> None:
    check_recipients("work", allowed, recipients)


@pytest.mark.parametrize(
    ("allowed", "recipients", "fragments"),
    [
        (DOMAIN, ["a@evil-partner.example"], ['"a@evil-partner.example"', '"@partner.example"']),
        (DOMAIN, ["a@sub.partner.example"], ['"a@sub.partner.example"']),
        (DOMAIN, ["a@partner.example.evil.com"], ['"a@partner.example.evil.com"']),
        (EXACT, ["b@partner.example"], ['"b@partner.example"']),
        (EXACT, ["xa@partner.example"], ['"xa@partner.example"']),
        (("partner.example",), ["a@partner.example"], ['"a@partner.example"']),
        (("@",), ["a@partner.example"], ['"a@partner.example"']),
        (("@", "@x"), ["a@partner.example"], ['"a@partner.example"']),
        (("@x",), ["a@xx", "a@x.example"], ['"a@xx", "a@x.example"']),
        (("@partner.example",), ["partner.example@evil.example"], ['"partner.example@evil.example"']),
        (
            EXACT,
            ["a@partner.example", "x@evil.com", "y@evil.com", "x@evil.com"],
            ['"x@evil.com", "y@evil.com".', "allows only"],
        ),
        ((), ["a@partner.example"], ["empty, which allows nobody"]),
        ([], ["a@partner.example"], ["empty, which allows nobody"]),
    ],
    ids=[
        "evil-prefixed-domain",
        "subdomain",
        "suffix-appended",
        "other-local-part",
        "exact-is-not-suffix",
        "entry-without-at-matches-nothing",
        "bare-at-entry-matches-nothing",
        "bare-at-beside-a-domain-matches-nothing-more",
        "one-letter-domain-is-not-a-prefix",
        "domain-as-local-part",
        "lists-every-refused-once",
        "empty-tuple-nobody",
        "empty-list-nobody",
    ],
)
def test_recipients_refused(allowed: Sequence[str], recipients: list[str], fragments: list[str]) -> None:
    err = refused(lambda: check_recipients("work", allowed, recipients), "send_forbidden", *fragments)
    assert "Nothing was sent" in err.message


def test_recipients_refusal_names_only_the_refused() -> None:
    err = refused(
        lambda: check_recipients("work", DOMAIN, ["a@partner.example", "x@evil.com"]),
        "send_forbidden",
        'may not write to "x@evil.com". Its allowed_recipients list allows only: "@partner.example".',
    )
    assert "a@partner.example" not in err.message.replace('"@partner.example"', "")


@pytest.mark.parametrize("to", [[], ["  "], ["", "\t"]])
def test_to_needs_an_address_even_with_cc_or_bcc(to: list[str]) -> None:
    refused(lambda: check_has_to(to, sending=True), "invalid_input", "at least one address in `to`", "Nothing was sent")
    refused(lambda: check_has_to(to, sending=False), "invalid_input", "Nothing was saved")
    check_has_to(["a@partner.example"], sending=True)


@pytest.mark.parametrize("allowed", [None, (), DOMAIN], ids=["anybody", "nobody", "domain"])
def test_recipients_empty_list_refused(allowed: Sequence[str] | None) -> None:
    refused(lambda: check_recipients("work", allowed, []), "send_forbidden", "no recipient", '"work"')


@pytest.mark.parametrize(
    "recipient",
    [
        '"a@partner.example" <x@evil>',
        "a@partner.example <x@evil.com>",
        "<a@partner.example>",
        "a@partner.example,x@evil.com",
        "x@evil.com;a@partner.example",
        "g: a@partner.example;",
        "a@partner.example\r\nBcc: x@evil.com",
        "a@partner.example\n",
        "\ra@partner.example",
        "a@partner.example\x00x@evil.com",
        "x@evil.com a@partner.example",
        "x@evil.com\ta@partner.example",
        "x@evil.com\u00a0@partner.example",
        "x@evil.com\u2028@partner.example",
        "x\u200b@partner.example",
        "x@evil.com(comment)@partner.example",
        "x@evil.com@partner.example",
        "@partner.example",
        "a@",
        "partner.example",
        "",
        "   ",
        '"quoted"@partner.example',
        "x\\@evil.com@partner.example",
        "@evil.com:a@partner.example",
        "a@partner.exampl\uff45",
        "a@\u212aartner.example",
        "a@partner.example.",
        "jiří@partner.example",
        "a@[192.0.2.1]",
        "a..b@partner.example",
    ],
    ids=[
        "display-name-spoof",
        "display-name-unquoted",
        "angle-brackets",
        "comma-joined",
        "semicolon-joined",
        "group-syntax",
        "crlf-header-injection",
        "trailing-lf",
        "leading-cr",
        "nul",
        "space-inside",
        "tab-inside",
        "nbsp-inside",
        "line-separator",
        "zero-width-space",
        "comment",
        "two-at-signs",
        "no-local-part",
        "no-domain",
        "no-at",
        "empty",
        "blank",
        "quoted-local-part",
        "backslash-escape",
        "source-route",
        "fullwidth-letter",
        "kelvin-sign",
        "trailing-dot",
        "non-ascii-local-part",
        "domain-literal",
        "double-dot",
    ],
)
@pytest.mark.parametrize("allowed", [None, DOMAIN], ids=["no-limit", "domain-rule"])
def test_recipients_not_plain_address(recipient: str, allowed: Sequence[str] | None) -> None:
    err = refused(
        lambda: check_recipients("work", allowed, ["ok@partner.example", recipient]),
        "invalid_input",
        "Not a plain e-mail address",
    )
    # The message never echoes raw control characters.
    assert "\r" not in err.message and "\n" not in err.message and "\x00" not in err.message
    assert "ok@partner.example" not in err.message


@pytest.mark.parametrize("count", [1, 99, 100])
@pytest.mark.parametrize("allowed", [None, DOMAIN], ids=["no-limit", "domain-rule"])
def test_recipients_up_to_gmails_100_are_allowed(count: int, allowed: Sequence[str] | None) -> None:
    # Gmail takes at most 100 recipients a message (to, cc and bcc together): 100 itself is fine.
    check_recipients("work", allowed, [f"r{i}@partner.example" for i in range(count)])


@pytest.mark.parametrize("count", [101, 150])
@pytest.mark.parametrize("allowed", [None, DOMAIN], ids=["no-limit", "domain-rule"])
def test_recipients_over_100_refused_before_anything_is_sent(count: int, allowed: Sequence[str] | None) -> None:
    err = refused(
        lambda: check_recipients("work", allowed, [f"r{i}@partner.example" for i in range(count)]),
        "invalid_input",
        f"{count} recipients (to, cc and bcc together) in one message; Gmail takes at most 100.",
        "Nothing was sent or saved.",
        "several messages of at most 100 each",
    )
    assert "r0@partner.example" not in err.message  # a count, never a list of 101 addresses


@pytest.mark.parametrize("count", [20, 21, 25])
def test_recipients_refusal_quotes_twenty_and_counts_the_rest(count: int) -> None:
    addresses = [f"x{i}@evil.example" for i in range(count)]
    err = refused(lambda: check_recipients("work", EXACT, addresses), "send_forbidden", '"x19@evil.example"')
    assert '"x20@evil.example"' not in err.message
    if count > 20:
        assert f'"x19@evil.example" and {count - 20} more.' in err.message
    else:
        assert " more" not in err.message


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: check_recipients("work", None, "a@partner.example"), "recipients"),
        (lambda: check_recipients("work", "a@partner.example", ["a@partner.example"]), "allowed"),
        (lambda: check_has_to("a@partner.example", sending=True), "to"),
        (lambda: resolve_attachments("/srv/mail/report.pdf", [Path("/srv/mail")]), "paths"),
    ],
    ids=["recipients", "allowed", "to", "paths"],
)
def test_bare_string_for_a_list_is_a_programming_error(call: Callable[[], object], argument: str) -> None:
    # Iterated, a str would be read one character at a time: the caller's bug is named, not guessed at.
    with pytest.raises(TypeError, match=f"^{argument} must be a sequence of strings, not a single string$"):
        call()


# --- sender / aliases ----------------------------------------------------------------------

ALIASES: list[tuple[str, str | None]] = [
    ("Info@Firm.example", 'Firm "Best" Ltd'),
    ("noname@firm.example", None),
    ("quotes@firm.example", '""'),
]


@pytest.mark.parametrize(
    ("from_alias", "expected"),
    [
        (None, ("me@firm.example", None)),
        ("", ("me@firm.example", None)),
        ("me@firm.example", ("me@firm.example", None)),
        (" ME@Firm.Example ", ("me@firm.example", None)),
        ("info@firm.example", ("Info@Firm.example", "Firm Best Ltd")),
        ("INFO@FIRM.EXAMPLE", ("Info@Firm.example", "Firm Best Ltd")),
        ("noname@firm.example", ("noname@firm.example", None)),
        ("quotes@firm.example", ("quotes@firm.example", None)),
    ],
    ids=[
        "absent",
        "empty",
        "account-itself",
        "account-case-and-spaces",
        "alias-exact-quotes-stripped",
        "alias-case-insensitive",
        "alias-without-name",
        "alias-name-only-quotes",
    ],
)
def test_resolve_sender(from_alias: str | None, expected: tuple[str, str | None]) -> None:
    assert resolve_sender("work", "me@firm.example", ALIASES, from_alias) == expected


@pytest.mark.parametrize(
    ("aliases", "from_alias", "fragments"),
    [
        (ALIASES, "boss@firm.example", ['"boss@firm.example"', "Its aliases are:", "Info@Firm.example"]),
        (ALIASES, "info@firm.example.evil", ["Its aliases are:"]),
        ([], "info@firm.example", ["has no aliases configured", "only as me@firm.example"]),
        ([], "me@firm.example\r\nBcc: x@evil", ["\\r\\n", "no aliases"]),
    ],
    ids=["unknown", "suffix-of-alias", "none-configured", "control-chars-escaped"],
)
def test_resolve_sender_refused(aliases: list[tuple[str, str | None]], from_alias: str, fragments: list[str]) -> None:
    err = refused(lambda: resolve_sender("work", "me@firm.example", aliases, from_alias), "send_forbidden", *fragments)
    assert "\r" not in err.message


def test_resolve_sender_refuses_broken_alias_name() -> None:
    refused(
        lambda: resolve_sender("work", "me@x.example", [("a@x.example", "A\r\nBcc: y")], "a@x.example"),
        "invalid_input",
        "The From display name contains a line break",
    )


def test_resolve_sender_refuses_broken_alias_address() -> None:
    refused(
        lambda: resolve_sender("work", "me@x.example", [("a\x07@x.example", "A")], "a\x07@x.example"),
        "invalid_input",
        "The From contains a line break or control character (U+0007)",
    )


def test_resolve_sender_refusal_lists_every_alias_with_its_name() -> None:
    refused(
        lambda: resolve_sender("work", "me@firm.example", ALIASES, "boss@firm.example"),
        "send_forbidden",
        'may not write as "boss@firm.example". Its aliases are: Info@Firm.example (Firm "Best" Ltd), '
        'noname@firm.example, quotes@firm.example (""). Nothing was sent.',
    )


# --- header values -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["Hello", "Re: čeká na vás", "tab\tinside", "", "\t"])
def test_header_value_allowed(value: str) -> None:
    check_header_value("subject", value)


@pytest.mark.parametrize(
    ("value", "described"),
    [
        ("Hi\r\nBcc: x@evil.com", "CR (U+000D), LF (U+000A)"),
        ("Hi\nBcc: x@evil.com", "LF (U+000A)"),
        ("Hi\rthere", "CR (U+000D)"),
        ("Hi\x00", "NUL (U+0000)"),
        ("bell\x07", "U+0007"),
        ("esc\x1b[31m", "U+001B"),
        ("del\x7f", "U+007F"),
        ("nel\x85", "U+0085"),
        ("line\u2028sep", "U+2028"),
        ("para\u2029sep", "U+2029"),
        ("vt\x0bff\x0c", "U+000B, U+000C"),
    ],
)
def test_header_value_refused(value: str, described: str) -> None:
    refused(lambda: check_header_value("subject", value), "invalid_input", "The subject", described)


# --- size ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, MAX_MESSAGE_BYTES - 1, MAX_MESSAGE_BYTES])
def test_size_within_limit(size: int) -> None:
    check_message_size(size, 3)


@pytest.mark.parametrize(
    ("size", "attachments", "fragments", "absent"),
    [
        (MAX_MESSAGE_BYTES + 1, 0, ["is 25.1 MB, over the 25.0 MB Gmail accepts. Nothing was sent or saved."], "third"),
        (MAX_MESSAGE_BYTES + 1, 2, ["is 25.1 MB", "2 attachment(s)", "about a third larger"], None),
        (30 * 1024 * 1024, 1, ["is 30.0 MB", "1 attachment(s)"], None),
        (int(31.25 * 1024 * 1024), 0, ["is 31.3 MB"], "attachment"),
    ],
    ids=["one-byte-over", "over-with-attachments", "thirty-mb", "rounds-up"],
)
def test_size_over_limit(size: int, attachments: int, fragments: list[str], absent: str | None) -> None:
    err = refused(lambda: check_message_size(size, attachments), "send_forbidden", *fragments)
    if absent:
        assert absent not in err.message
