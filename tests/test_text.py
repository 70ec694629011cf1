"""Text shared by every layer (text.py): hidden characters stripped, HTML read as plain text."""

from __future__ import annotations

import unicodedata

import pytest

from mcp_multi_gmail.text import clean, html_to_text

# ---------------------------------------------------------------------------------------------
# clean


@pytest.mark.parametrize(
    "hidden",
    [
        "\u202a", "\u202b", "\u202c", "\u202d", "\u202e",  # bidi embeddings and overrides
        "\u2066", "\u2067", "\u2068", "\u2069",  # bidi isolates
        "\u200e", "\u200f", "\u061c",  # marks
        "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff",  # zero-width
        "\U000e0001", "\U000e0041", "\U000e007f", "\U000e0000",  # tag characters
        "\u00ad",  # soft hyphen
        "\u2064", "\U0001d173",  # other Cf (invisible plus, musical formatting)
    ],
)  # fmt: skip
def test_clean_removes_every_hidden_character(hidden: str) -> None:
    assert clean(f"pay{hidden}pal{hidden}") == "paypal"


def test_clean_keeps_visible_text() -> None:
    text = "Dobrý den, č Ř ž\n\tšéf 😀 👍🏽 ❤️ مرحبا שלום 中文 \u00a0x"
    assert clean(text) == text


def test_clean_rlo_spoof_and_tags_together() -> None:
    assert clean("invoice\u202efdp.exe") == "invoicefdp.exe"
    assert clean("ok\u200b\U000e0041\U000e0042 č 😀") == "ok č 😀"


def test_clean_empty_and_none() -> None:
    assert clean(None) is None
    assert clean("") == ""
    assert clean("plain ascii") == "plain ascii"


def test_clean_leaves_no_format_character_in_any_plane() -> None:
    every_cf = "".join(chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf")
    assert len(every_cf) > 100
    assert clean("a" + every_cf + "b") == "ab"


# ---------------------------------------------------------------------------------------------
# HTML → text


def test_html_to_text_document() -> None:
    html = (
        "<!DOCTYPE html><HTML><HEAD><TITLE>Subject</TITLE><STYLE>p { color: red }</STYLE></HEAD>\n"
        '<BODY class="x" style="margin:0">\n'
        "  <p>Dobr&yacute;&nbsp;den,</p>\n"
        "  <DIV>druh&#253;   <b>&#345;&aacute;dek</b><br>t&#x159;et&iacute;<BR/>"
        "&lt;4&gt; &quot;q&quot; &#39;a&#39; &amp;</DIV>\n"
        "  <script type='text/javascript'>alert('x')</script>\n"
        "  <h2>Nadpis</h2><blockquote>citace</blockquote>\n"
        "  <ul><li>jedna</li><li>dv\u200be</li></ul>\n"
        "  <table><tr><td>A</td><td>B</td></tr><tr><td>C</td><td>D</td></tr></table>\n"
        "  <!-- hidden <p>comment</p> -->\n"
        "</BODY>after the body</HTML>"
    )
    expected = [
        "Dobrý den,",
        "druhý řádek",
        "třetí",
        "<4> \"q\" 'a' &",
        "Nadpis",
        "citace",
        "",
        "- jedna",
        "- dve",
        "",
        "A B",
        "C D",
    ]
    assert html_to_text(html).split("\n") == expected


def test_html_to_text_fragment_without_body() -> None:
    assert html_to_text("Hello<br>world") == "Hello\nworld"
    assert html_to_text("<div>a</div><div></div><div></div><div></div><div>b</div>") == "a\n\nb"
    assert html_to_text("") == ""
    assert html_to_text("   <p>  </p>  ") == ""


def test_html_to_text_uses_last_closing_body() -> None:
    html = "<body><p>one</p></body><p>two</p></body><p>outside</p>"
    assert html_to_text(html) == "one\ntwo"


def test_html_to_text_keeps_preformatted_text() -> None:
    assert html_to_text("<p>Log:</p><pre>  a  b\r\n    c</pre><p>end</p>") == "Log:\n  a  b\n    c\nend"


def test_html_to_text_unclosed_script_and_comment() -> None:
    assert html_to_text("visible<script>alert(1)") == "visible"
    assert html_to_text("visible<!-- never closed <p>x</p>") == "visible"
    assert html_to_text("a < b and c > d") == "a < b and c > d"
