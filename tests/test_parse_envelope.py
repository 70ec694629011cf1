"""Message-IDs and the ENVELOPE (gmail/parse/envelope.py), built from wire text by imapclient's own
parser as in a session (tests/support/fetch_response.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mcp_multi_gmail.domain import Address
from mcp_multi_gmail.gmail.parse.envelope import EnvelopeInfo, addresses, bare_id, envelope_info
from support.fetch_response import fetched


def envelope(wire: bytes) -> EnvelopeInfo:
    return envelope_info(fetched(b"ENVELOPE " + wire)[b"ENVELOPE"])


# ---------------------------------------------------------------------------------------------
# bare_id


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("<abc@example.com>", "abc@example.com"),
        ("  <abc@example.com>\r\n", "abc@example.com"),
        (b"<abc@example.com>", "abc@example.com"),
        ("abc@example.com", "abc@example.com"),
        ("<<abc@example.com>>", "abc@example.com"),  # the innermost <…>
        ("<9209252113.AA00975@ ebony >", "9209252113.AA00975@ebony"),  # obsolete spacing is not the id
        ("<abc@example.com> (sent by X)", "abc@example.com"),  # a comment after the id
        ('<"a b"@example.com>', '"a b"@example.com'),  # a quoted local part keeps its space
        ("  abc @ example.com ", "abc@example.com"),  # no brackets at all
        ("<1234   @   local(blah)  .machine .example>", "1234@local.machine.example"),  # RFC 5322 A.6.3
        ("<abc@example.com", "abc@example.com"),
        ("", None),
        ("   ", None),
        ("<>", None),
        (b"", None),
        (None, None),
    ],
)
def test_bare_id(value: str | bytes | None, expected: str | None) -> None:
    assert bare_id(value) == expected


# ---------------------------------------------------------------------------------------------
# ENVELOPE


def test_envelope_full() -> None:
    info = envelope(
        b'("Tue, 3 Nov 2026 14:05:00 +0100" "=?utf-8?q?Faktura_=C4=8D=2E_12?="'
        b' (("=?utf-8?q?Jan_Nov=C3=A1k?=" NIL "jan" "Example.CZ"))'
        b' (("Jan" NIL "jan" "example.cz")) NIL'
        b' (("Eva" NIL "Eva.Dvorak" "Firma.CZ")(NIL NIL "bob" "example.com"))'
        b' ((NIL NIL "undisclosed-recipients" NIL)(NIL NIL NIL NIL))'
        b' (("Skryt\xc3\xbd" NIL "hidden" "example.org"))'
        b' "<orig@x.y> <older@x.y>" "<new@x.y>")'
    )
    assert info == EnvelopeInfo(
        date=datetime(2026, 11, 3, 13, 5, tzinfo=UTC),
        subject="Faktura č. 12",
        from_=Address(name="Jan Novák", address="jan@example.cz"),
        to=[Address(name="Eva", address="Eva.Dvorak@firma.cz"), Address(name=None, address="bob@example.com")],
        cc=[],
        bcc=[Address(name="Skrytý", address="hidden@example.org")],
        message_id="new@x.y",
        in_reply_to="orig@x.y",
    )
    assert info.date is not None and info.date.utcoffset() is not None


def test_envelope_nil_everywhere_and_none() -> None:
    assert envelope(b"(NIL NIL NIL NIL NIL NIL NIL NIL NIL NIL)") == EnvelopeInfo()
    assert envelope_info(None) == EnvelopeInfo()


def test_envelope_date_without_zone_reads_as_utc() -> None:
    info = envelope(b'("3 Nov 2026 14:05:00" "s" NIL NIL NIL NIL NIL NIL NIL NIL)')
    assert info.date == datetime(2026, 11, 3, 14, 5, tzinfo=UTC)


def test_envelope_unreadable_date_is_none() -> None:
    assert envelope(b'("yesterday-ish" "s" NIL NIL NIL NIL NIL NIL NIL NIL)').date is None


def test_envelope_raw_utf8_subject_in_literal() -> None:
    subject = "Přeposláno: účet".encode()
    data = fetched([(b"ENVELOPE (NIL {%d}" % len(subject), subject), b" NIL NIL NIL NIL NIL NIL NIL NIL)"])
    assert envelope_info(data[b"ENVELOPE"]).subject == "Přeposláno: účet"


def test_envelope_in_reply_to_forms() -> None:
    def reply(wire: bytes) -> str | None:
        return envelope(b"(NIL NIL NIL NIL NIL NIL NIL NIL " + wire + b" NIL)").in_reply_to

    assert reply(b'"<a@b> (comment) <c@d>"') == "a@b"
    assert reply(b'"bare@id"') == "bare@id"
    assert reply(b'""') is None
    assert reply(b"NIL") is None


def test_addresses_groups_hidden_characters_and_junk() -> None:
    info = envelope(
        b"(NIL NIL"
        b' (("=?utf-8?q?PayPal=E2=80=AE?=" NIL "service" "paypal.example"))'
        b" NIL NIL"
        b' ((NIL NIL "team" NIL)(NIL NIL "a" "X.org")(NIL NIL NIL NIL)("" NIL "b" "y.org"))'
        b' ((NIL NIL "ceo\xe2\x80\x8b" "Company.example"))'
        b" NIL NIL NIL)"
    )
    assert info.from_ == Address(name="PayPal", address="service@paypal.example")
    assert info.to == [Address(name=None, address="a@x.org"), Address(name=None, address="b@y.org")]
    # a zero-width look-alike is marked, not merged into the real address
    assert info.cc == [Address(name=None, address="ceo\ufffd@company.example")]
    assert addresses(None) == []
    assert addresses(b"junk") == []
    assert addresses(42) == []  # type: ignore[arg-type]
    assert addresses([None, 7, ("n", None, "m", "h.example")]) == [Address(name="n", address="m@h.example")]
    assert addresses([("n", None, "m", "")]) == [Address(name="n", address=None)]
