"""Signatures: literal or read from files (relative to the config file's folder)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..text import html_to_text
from .models import RawSignature
from .paths import absolute_from
from .report import Problems
from .resolved import Signature


def resolve_signatures(
    account: str, raw: Mapping[str, RawSignature], config_dir: Path, problems: Problems
) -> dict[str, Signature]:
    prefix = f"schránka `{account}`: "

    def side(label: str, key: str, literal: str | None, file: str | None) -> tuple[str, bool]:
        """One side (text or html) of a signature: its content and whether it failed."""
        if literal is not None and file is not None:
            problems.add(f'{prefix}podpis "{label}" má zároveň "{key}" i "{key}_file"; ponechte jen jedno')
            return "", True
        if file is None:
            return (literal or "").rstrip(), False
        path = absolute_from(config_dir, file)
        try:
            content = path.read_text(encoding="utf-8").removeprefix("\ufeff")
        except (OSError, UnicodeDecodeError):
            problems.add(f'{prefix}podpis "{label}": soubor `{path}` nejde přečíst')
            return "", True
        return content.rstrip(), False

    result: dict[str, Signature] = {}
    for label, sig in raw.items():
        text, text_failed = side(label, "text", sig.text, sig.text_file)
        markup, html_failed = side(label, "html", sig.html, sig.html_file)
        if text_failed or html_failed:
            continue  # one fault, one line: no "empty" complaint on top
        if not text.strip() and not markup.strip():
            given = any(v is not None for v in (sig.text, sig.text_file, sig.html, sig.html_file))
            problems.add(f'{prefix}podpis "{label}" ' + ("je prázdný" if given else "nemá text ani HTML"))
            continue
        html = markup if markup.strip() else None
        plain = text if text.strip() else html_to_text(markup)
        result[label] = Signature(name=label, text=plain, html=html)
    return result
