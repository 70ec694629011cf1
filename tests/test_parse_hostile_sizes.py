"""Hostile sizes: every scan of the parsers stays linear (a regex that rescans from each position
would take minutes on these inputs)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcp_multi_gmail.gmail.parse.authresults import authentication
from mcp_multi_gmail.gmail.parse.encoded_words import decode_words
from mcp_multi_gmail.gmail.parse.filenames import safe_filename
from mcp_multi_gmail.gmail.parse.transfer import decode_body
from mcp_multi_gmail.text import html_to_text


@pytest.mark.parametrize(
    "call",
    [
        lambda: authentication(b"Authentication-Results: mx.google.com; " + b"a-" * 50_000, "a@b.example"),
        lambda: authentication(b"Authentication-Results: mx.google.com; " + b" " * 100_000 + b"x", None),
        lambda: authentication(b"Authentication-Results: mx.google.com; " + b"(" * 100_000, None),
        lambda: safe_filename(". " * 100_000 + "x", "1"),
        lambda: safe_filename("x" + ". " * 100_000, "1"),
        lambda: html_to_text("<a" * 200_000),
        lambda: html_to_text("<body" * 100_000),
        lambda: html_to_text("<script" * 100_000),
        lambda: decode_words("=?x?q?" * 50_000),
        lambda: decode_body(b"=" * 500_000, "base64", "utf-8"),
    ],
)
def test_hostile_sizes_stay_fast(call: Any) -> None:
    # CPU time of this process, not wall time: the other workers sharing the cores do not count.
    started = time.process_time()
    call()
    assert time.process_time() - started < 2.0
