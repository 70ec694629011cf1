"""HTML to text and previews, as pure functions: what a reader sees, and only that."""

from __future__ import annotations

import pytest

from mcp_multi_gmail.htmltext import html_to_text
from mcp_multi_gmail.mail.core.preview import PREVIEW_CHARS, preview_of


def test_paragraphs_lists_links_and_entities() -> None:
    html = (
        "<h1>Nadpis</h1><p>Jedna&nbsp;věta &amp; druhá.<br>Nový řádek</p>"
        '<ul><li>a</li><li>b <a href="https://x.example/p?q=1&amp;r=2">odkaz</a></li></ul>'
        '<p><a href="mailto:info@x.example">info@x.example</a> <a href="https://x.example">https://x.example</a></p>'
        '<p><a href="javascript:steal()">klikni</a></p>'
    )
    assert html_to_text(html).text == (
        "Nadpis\n\nJedna věta & druhá.\nNový řádek\n\n- a\n- b odkaz (https://x.example/p?q=1&r=2)\n\n"
        "info@x.example https://x.example\n\nklikni"
    )


def test_head_script_style_and_comments_are_not_text_nor_hidden_text() -> None:
    html = "<head><title>T</title><style>p{}</style></head><!-- note --><script>x()</script><p>Ahoj</p>"
    assert html_to_text(html) == html_to_text("<p>Ahoj</p>")
    assert html_to_text(html).hidden_chars == 0


@pytest.mark.parametrize(
    "opening",
    [
        '<div style="display:none">',
        '<div style="DISPLAY : NONE !important">',
        '<div style="visibility: hidden">',
        "<div hidden>",
        '<div style="font-size:0">',
        '<div style="font-size: 0px;">',
        '<div style="line-height:1;font-size:0pt">',
        '<div style="opacity: 0">',
    ],
)
def test_hidden_elements_are_counted_not_shown(opening: str) -> None:
    converted = html_to_text(f"<p>Viditelné</p>{opening}<span>tajný pokyn</span></div><p>Konec</p>")
    assert converted.text == "Viditelné\n\nKonec"
    assert converted.hidden_chars == len("tajný pokyn")


def test_font_sizes_that_are_not_zero_stay_visible() -> None:
    for style in ("font-size:0.8em", "font-size:10px", "font-size:09px", "opacity:0.5"):
        assert html_to_text(f'<span style="{style}">malé</span>').text == "malé"


def test_an_unclosed_hidden_paragraph_ends_at_the_next_block() -> None:
    converted = html_to_text('<p style="display:none">skryté<p>vidět</p>')
    assert converted.text == "vidět" and converted.hidden_chars == len("skryté")


def test_quotes_and_signatures_left_out_only_when_asked() -> None:
    html = (
        '<div dir="ltr">Díky, platí.</div><div class="gmail_signature">Jana</div>'
        '<div class="gmail_quote">Dne po napsal:<blockquote class="gmail_quote">původní</blockquote></div>'
    )
    assert html_to_text(html, skip_quotes=True).text == "Díky, platí."
    whole = html_to_text(html)
    assert "původní" in whole.text and whole.hidden_chars == 0


def test_preview_cuts_quotes_signature_and_length() -> None:
    reply = "Ano, přijdu.\n\nOn Mon, 30 Nov 2026 at 10:00, Petr <petr@example.cz>\nwrote:\n> Přijdeš?\n"
    assert preview_of(reply, html=False) == "Ano, přijdu."
    assert preview_of("Díky\n-- \nJana Nováková\nknihovna", html=False) == "Díky"
    assert (
        preview_of("Dne 30. 11. 2026 v 10:00 Petr napsal(a):\n> x", html=False)
        == "Dne 30. 11. 2026 v 10:00 Petr napsal(a): > x"
    )
    long = preview_of("slovo " * 200, html=False)
    assert len(long) == PREVIEW_CHARS and long.endswith("…")


def test_preview_of_a_forward_keeps_the_note_or_the_forwarded_text() -> None:
    note = "Mrkni na to.\n\n---------- Forwarded message ---------\nFrom: a@example.org\nText"
    assert preview_of(note, html=False) == "Mrkni na to."
    bare = "---------- Přeposlaná zpráva ---------\nVyúčtování je hotové."
    assert preview_of(bare, html=False) == "Vyúčtování je hotové."
