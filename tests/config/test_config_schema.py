"""Reading the file and the strict schema: every refusal names the path and never quotes values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.config import ConfigError, load_config

CANARY = "Kanarek-7Qx!tajne"


def account(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": "prace", "address": "jan@example.com", "password": "abcdefghijklmnop"}
    base.update(changes)
    return base


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def refusal(path: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert str(info.value) == info.value.message
    return info.value.message


def test_minimal_config_loads(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, {"accounts": [account()]}), environ={})
    assert config.names() == ["prace"]
    assert config.account("prace") is not None
    assert config.account("nic") is None
    assert config.path == tmp_path / "config.json"


def test_bom_is_stripped(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"accounts": [account()]}).encode())
    assert load_config(path, environ={}).names() == ["prace"]


def test_unreadable_file_names_path_and_mcp_json(tmp_path: Path) -> None:
    missing = tmp_path / "nic.json"
    message = refusal(missing)
    assert str(missing) in message
    assert "--config" in message and ".mcp.json" in message


def test_directory_instead_of_file_is_unreadable(tmp_path: Path) -> None:
    message = refusal(tmp_path)
    assert "nejde přečíst" in message


def test_invalid_json_hides_parser_text(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text('{"accounts": [{"name": "prace", "password": "' + CANARY + '" "x"}]}', encoding="utf-8")
    message = refusal(path)
    assert str(path) in message
    assert "není platný JSON" in message
    assert CANARY not in message
    assert "Expecting" not in message  # the json module's own wording
    assert "uvozovky" in message  # the generic hint


def test_invalid_json_has_no_exception_context(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_text("{nope", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={})
    assert info.value.__context__ is None and info.value.__cause__ is None


def test_not_utf8_is_refused_like_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(b'{"accounts": "\xff\xfe"}')
    assert "není platný JSON" in refusal(path)


def test_root_must_be_an_object(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, [account()]))
    assert f"`{tmp_path / 'config.json'}` není platné nastavení:" in message
    assert "  (root): musí být objekt" in message


def test_accounts_required_and_not_empty(tmp_path: Path) -> None:
    assert "  accounts: chybí" in refusal(write(tmp_path, {}))
    assert "  accounts: nastavte aspoň jednu schránku" in refusal(write(tmp_path, {"accounts": []}))


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"accounts": [account()], "extra_key": 1}, "  extra_key: "),
        ({"accounts": [account(alowed_recipients=[])]}, "  accounts.0.alowed_recipients: "),
        (
            {"accounts": [account(signatures={"s": {"text": "x", "txt": "y"}})]},
            "  accounts.0.signatures.s.txt: ",
        ),
        (
            {"accounts": [account(aliases=[{"address": "a@example.com", "nazev": "A"}])]},
            "  accounts.0.aliases.0.nazev: ",
        ),
    ],
)
def test_unknown_keys_refused_at_every_level(tmp_path: Path, data: dict[str, Any], where: str) -> None:
    message = refusal(write(tmp_path, data))
    line = next(line for line in message.splitlines() if line.startswith(where))
    assert "neznámý klíč" in line and "novější verzi" in line and "překlep" in line


def test_label_prefix_has_its_own_message(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, {"accounts": [account()], "label_prefix": "asistent"}))
    assert "  label_prefix: " in message
    assert "processed_label" in message and "asistent/zpracováno" in message
    assert "neznámý klíč" not in message


def test_time_horizon_has_its_own_message(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, {"accounts": [account(time_horizon="7d")]}))
    assert "  accounts.0.time_horizon: " in message
    assert "since" in message and "mg_next_pass" in message
    assert "neznámý klíč" not in message


@pytest.mark.parametrize("name", ["Prace", "práce", "-prace", "_x", "a b", ""])
def test_bad_account_name(tmp_path: Path, name: str) -> None:
    message = refusal(write(tmp_path, {"accounts": [account(name=name)]}))
    assert "  accounts.0.name: musí začínat malým písmenem nebo číslicí" in message


@pytest.mark.parametrize("name", ["prace", "0x", "a-b_c"])
def test_good_account_names(tmp_path: Path, name: str) -> None:
    assert load_config(write(tmp_path, {"accounts": [account(name=name)]}), environ={}).names() == [name]


@pytest.mark.parametrize("address", ["jan", "jan@", "@example.com", "jan@example", "a@b@example.com", "j an@x.cz"])
def test_bad_address(tmp_path: Path, address: str) -> None:
    message = refusal(write(tmp_path, {"accounts": [account(address=address)]}))
    assert "  accounts.0.address: musí být e-mailová adresa" in message


def test_bad_alias_address(tmp_path: Path) -> None:
    message = refusal(write(tmp_path, {"accounts": [account(aliases=[{"address": "obchod"}])]}))
    assert "  accounts.0.aliases.0.address: musí být e-mailová adresa" in message


@pytest.mark.parametrize("port", [25, "465", 2525])
def test_smtp_port_only_465_or_587(tmp_path: Path, port: Any) -> None:
    message = refusal(write(tmp_path, {"accounts": [account(smtp_port=port)]}))
    assert "  accounts.0.smtp_port: musí být 465 nebo 587" in message
    message = refusal(write(tmp_path, {"accounts": [account()], "smtp_port": port}))
    assert "  smtp_port: musí být 465 nebo 587" in message


def test_smtp_port_inherited_and_overridden(tmp_path: Path) -> None:
    data = {"smtp_port": 587, "accounts": [account(), account(name="b", smtp_port=465)]}
    config = load_config(write(tmp_path, data), environ={})
    assert [a.smtp_port for a in config.accounts] == [587, 465]
    only = load_config(write(tmp_path, {"accounts": [account()]}), environ={})
    assert only.accounts[0].smtp_port is None


def test_types_are_strict(tmp_path: Path) -> None:
    data = {"accounts": [account(can_send="true", assignment_labels="Anna")], "quote_locale": "de"}
    message = refusal(write(tmp_path, data))
    assert "  accounts.0.can_send: musí být true nebo false" in message
    assert "  accounts.0.assignment_labels: musí být seznam" in message
    assert "  quote_locale: musí být 'cs' nebo 'en'" in message


def test_allowed_recipients_null_is_refused(tmp_path: Path) -> None:
    # null must not silently mean "no limit"
    assert "  accounts.0.allowed_recipients: " in refusal(
        write(tmp_path, {"accounts": [account(allowed_recipients=None)]})
    )


def test_empty_strings_refused(tmp_path: Path) -> None:
    data = {
        "accounts": [account(password="", classification_labels={"": "x", "a": ""})],
        "download_dir": "",
    }
    message = refusal(write(tmp_path, data))
    assert "  accounts.0.password: nesmí být prázdné" in message
    assert '  accounts.0.classification_labels."": název nesmí být prázdný' in message
    assert "  accounts.0.classification_labels.a: nesmí být prázdné" in message
    assert "  download_dir: nesmí být prázdné" in message


def test_schema_message_never_shows_password_values(tmp_path: Path) -> None:
    data = {
        "accounts": [
            {"name": "prace", "address": "jan@example.com", "password": 12345, "pasword": CANARY},
            {"name": "Bad", "address": CANARY, "password": [CANARY]},
        ],
        "passwords_file": {"x": CANARY},
    }
    message = refusal(write(tmp_path, data))
    assert CANARY not in message and "12345" not in message
    assert "  accounts.0.password: musí být text" in message
    assert "  accounts.1.password: musí být text" in message


def test_duplicate_names(tmp_path: Path) -> None:
    data = {"accounts": [account(), account(address="b@example.com"), account(name="x"), account(name="x")]}
    message = refusal(write(tmp_path, data))
    assert "jména schránek se opakují (`prace`, `x`)" in message
    assert "jsou 1 problém" not in message and "je 1 problém:" in message
