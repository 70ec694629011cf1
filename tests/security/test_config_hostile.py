"""Hostile values in the configuration: a label, address, display name or path with a line break, NUL
or another control character would reach an IMAP command, a header or open() later. They are
refused when the file is loaded (a Czech report naming the key; `config_invalid` from
mg_reload_config), never crash the loader, and the running settings stay.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from security_support import CANARY_GROUPED, ME, error_of

from mcp_multi_gmail.config import ConfigError, load_config
from mcp_multi_gmail.runtime import Runtime

ACCOUNT: dict[str, Any] = {"name": "o", "address": ME, "password": CANARY_GROUPED}


def account(**changes: Any) -> dict[str, Any]:
    return {"accounts": [{**ACCOUNT, **changes}]}


CASES: list[tuple[str, dict[str, Any], str]] = [
    ("processed-label-crlf", account(processed_label="Asistent\r\nA1 DELETE INBOX"), "accounts.0.processed_label"),
    ("processed-label-lf", account(processed_label="Asistent\nA1 DELETE INBOX"), "accounts.0.processed_label"),
    ("processed-label-nul", account(processed_label="Asistent\x00"), "accounts.0.processed_label"),
    ("processed-label-line-separator", account(processed_label="Asistent\u2028x"), "accounts.0.processed_label"),
    (
        "classification-crlf",
        account(classification_labels={"Asistent/akce\r\nA1 LOGOUT": "x"}),
        "accounts.0.classification_labels",
    ),
    ("top-classification-nul", {**account(), "classification_labels": {"A\x00": "x"}}, "classification_labels"),
    ("assignment-label-lf", account(assignment_labels=["Anna\nA1 LOGOUT"]), "accounts.0.assignment_labels.0"),
    ("my-label-nul", account(assignment_labels=["Anna"], my_label="Anna\x00"), "accounts.0.my_label"),
    ("address-nul", account(address="osobni\x00@example.cz"), "accounts.0.address"),
    ("address-crlf", account(address="osobni@example.cz\r\nBcc: x@evil.example"), "accounts.0.address"),
    ("alias-address-nul", account(aliases=[{"address": "b\x00@example.cz"}]), "accounts.0.aliases.0.address"),
    ("alias-name-crlf", account(aliases=[{"address": "b@example.cz", "name": "B\r\nBcc: x@evil"}]), "aliases.0.name"),
    ("download-dir-nul", {**account(), "download_dir": "/srv/x\x00y"}, "download_dir"),
    ("attachment-dir-nul", {**account(), "attachment_dirs": ["/srv/x\x00y"]}, "attachment_dirs.0"),
    ("passwords-file-nul", {**account(), "passwords_file": "hesla\x00.json"}, "passwords_file"),
    ("signature-file-nul", account(signatures={"s": {"text_file": "podpis\x00.txt"}}), "signatures.s.text_file"),
    ("signature-html-file-lf", account(signatures={"s": {"html_file": "podpis\n.html"}}), "signatures.s.html_file"),
]


def _write(tmp_path: Path, body: dict[str, Any]) -> Path:
    path = tmp_path / "multigmail.json"
    path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize(("name", "body", "where"), CASES, ids=[c[0] for c in CASES])
def test_control_characters_in_the_configuration_are_refused_at_load(
    name: str, body: dict[str, Any], where: str, tmp_path: Path, counts: Counter[str]
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config(_write(tmp_path, body), layout=None, environ={})
    report = caught.value.message
    assert where in report, report
    # The report names the place; a control character in a key is shown escaped, never raw.
    assert not any(ch in report for ch in "\x00\r\u2028")
    assert not any(line.lstrip().startswith("A1 ") for line in report.splitlines())
    counts["hostile"] += 1


@pytest.mark.anyio
async def test_reload_refuses_them_and_keeps_the_running_settings(
    make_runtime: Callable[..., Runtime], call: Callable[..., Any], tmp_path: Path
) -> None:
    runtime = make_runtime()
    before = runtime.config
    for name, body, _where in CASES:
        _write(tmp_path, body)
        error = error_of(await call(runtime, "mg_reload_config", {}))
        assert error is not None and error["code"] == "config_invalid", (name, error)
        assert "Unexpected failure" not in error["message"]
    assert runtime.config is before


@pytest.mark.parametrize("which", ["config", "passwords"])
def test_brackets_nested_too_deep_are_a_report_not_a_crash(tmp_path: Path, which: str) -> None:
    """json.loads raises RecursionError past about a thousand levels: the start would crash before
    repair mode could show anything. It is a report like any other unreadable file."""
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    passwords = tmp_path / "hesla.json"
    passwords.write_text(deep if which == "passwords" else json.dumps({"o": CANARY_GROUPED}), encoding="utf-8")
    body = {"accounts": [{"name": "o", "address": ME}], "passwords_file": str(passwords)}
    path = tmp_path / "multigmail.json"
    path.write_text(deep if which == "config" else json.dumps(body), encoding="utf-8")
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    expected = "vnořené příliš hluboko" if which == "config" else "soubor hesel"
    assert expected in str(refused.value)
    assert CANARY_GROUPED not in str(refused.value)
