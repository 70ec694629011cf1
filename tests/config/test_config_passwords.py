"""Password sources, the app-password whitespace rule, the placeholder, the passwords file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.config import PLACEHOLDER, ConfigError, load_config, normalize_app_password
from mcp_multi_gmail.layout import AddonLayout

APP = "abcdefghijklmnop"
HINT = "dvoufázovým ověřením"


def account(name: str = "prace", **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": name, "address": f"{name}@example.com"}
    base.update(changes)
    return base


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def refusal(path: Path, **kwargs: Any) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, **kwargs)
    return info.value.message


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("abcd efgh ijkl mnop", APP),
        (" abcd\tefgh\nijkl mnop ", APP),
        ("abcd\u00a0efgh\u00a0ijkl\u00a0mnop", APP),
        (APP, APP),
        ("Abcd efgh ijkl mnop", "Abcd efgh ijkl mnop"),  # upper case: not an app password
        ("abcd efgh ijkl mno", "abcd efgh ijkl mno"),  # 15 letters
        ("my secret pass 1", "my secret pass 1"),
        ("abcd efgh ijkl mnopq", "abcd efgh ijkl mnopq"),
    ],
)
def test_whitespace_rule(given: str, expected: str) -> None:
    assert normalize_app_password(given) == expected


def test_whitespace_rule_applies_to_every_source(tmp_path: Path) -> None:
    write(tmp_path / "hesla.json", {"c": "abcd efgh ijkl mnop"})
    data = {
        "passwords_file": "hesla.json",
        "accounts": [
            account("a", password="abcd efgh ijkl mnop"),
            account("b", password_env="HESLO_B"),
            account("c"),
            account("d", password="not an app pw"),
        ],
    }
    config = load_config(write(tmp_path / "config.json", data), environ={"HESLO_B": " abcd efgh ijkl mnop "})
    assert [a.password for a in config.accounts] == [APP, APP, APP, "not an app pw"]


def test_placeholder_in_literal_is_one_warning(tmp_path: Path) -> None:
    data = {"accounts": [account("a", password=PLACEHOLDER), account("b", password=APP)]}
    config = load_config(write(tmp_path / "config.json", data), environ={})
    assert len(config.warnings) == 1
    assert "`a`" in config.warnings[0] and PLACEHOLDER in config.warnings[0]
    assert not config.warnings[0].startswith("POZOR")
    assert config.account("a") is not None


def test_placeholder_in_passwords_file_is_one_warning_naming_file(tmp_path: Path) -> None:
    hesla = write(tmp_path / "hesla.json", {"a": f"xx{PLACEHOLDER}xx", "b": APP})
    data = {"passwords_file": "hesla.json", "accounts": [account("a"), account("b")]}
    config = load_config(write(tmp_path / "config.json", data), environ={})
    assert len(config.warnings) == 1
    assert str(hesla) in config.warnings[0]


def test_no_warning_when_filled(tmp_path: Path) -> None:
    write(tmp_path / "hesla.json", {"b": APP})
    data = {"passwords_file": "hesla.json", "accounts": [account("a", password=APP), account("b")]}
    assert load_config(write(tmp_path / "config.json", data), environ={}).warnings == ()


def test_placeholder_in_env_is_not_checked(tmp_path: Path) -> None:
    data = {"accounts": [account("a", password_env="H")]}
    config = load_config(write(tmp_path / "config.json", data), environ={"H": PLACEHOLDER})
    assert config.warnings == ()


def test_both_password_and_env(tmp_path: Path) -> None:
    data = {"accounts": [account("a", password=APP, password_env="H")]}
    message = refusal(write(tmp_path / "config.json", data), environ={"H": APP})
    assert 'schránka `a` má zároveň "password" i "password_env"' in message
    assert HINT in message


@pytest.mark.parametrize("env", [{}, {"HESLO": ""}, {"HESLO": "  "}])
def test_missing_env_variable(tmp_path: Path, env: dict[str, str]) -> None:
    data = {"accounts": [account("a", password_env="HESLO")]}
    message = refusal(write(tmp_path / "config.json", data), environ=env)
    assert "schránka `a` čeká heslo v proměnné prostředí HESLO" in message
    assert HINT in message


def test_env_defaults_to_os_environ(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MG_TEST_HESLO", APP)
    data = {"accounts": [account("a", password_env="MG_TEST_HESLO")]}
    assert load_config(write(tmp_path / "config.json", data)).accounts[0].password == APP


def test_no_password_source_names_all_three(tmp_path: Path) -> None:
    message = refusal(write(tmp_path / "config.json", {"accounts": [account("a")]}), environ={})
    line = next(line for line in message.splitlines() if "`a`" in line)
    assert '"password"' in line and '"password_env"' in line and '"passwords_file"' in line
    assert HINT in message


def test_passwords_file_relative_to_config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hesla = write(tmp_path / "cfg" / "tajne" / "hesla.json", {"a": APP})
    monkeypatch.chdir(tmp_path)  # cwd must not matter
    config = load_config(
        write(
            tmp_path / "cfg" / "config.json",
            {"passwords_file": "tajne/hesla.json", "accounts": [account("a")]},
        ),
        environ={},
    )
    assert config.passwords_file == hesla
    assert config.accounts[0].password == APP


def test_passwords_file_relative_to_vault_with_layout(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    hesla = write(vault / ".miladka" / "secrets" / "hesla.json", {"a": APP})
    layout = AddonLayout(vault_root=vault, kind=".doplnky", addon_dir=vault / ".doplnky" / "mcp-multi-gmail")
    path = write(
        vault / "system" / "multigmail.json",
        {"passwords_file": ".miladka/secrets/hesla.json", "accounts": [account("a")]},
    )
    config = load_config(path, layout=layout, environ={})
    assert config.passwords_file == hesla
    assert config.accounts[0].password == APP


def test_passwords_file_unreadable(tmp_path: Path) -> None:
    data = {"passwords_file": "nic.json", "accounts": [account("a"), account("b")]}
    message = refusal(write(tmp_path / "config.json", data), environ={})
    assert f"soubor hesel `{tmp_path / 'nic.json'}` nejde přečíst" in message
    assert "je 1 problém:" in message  # accounts relying on the broken file are not reported again
    assert HINT in message


def test_passwords_file_invalid_json_not_quoted(tmp_path: Path) -> None:
    canary = "Kanarek-7Qx!tajne"
    (tmp_path / "hesla.json").write_text('{"a": "' + canary + '" oops}', encoding="utf-8")
    data = {"passwords_file": "hesla.json", "accounts": [account("a")]}
    message = refusal(write(tmp_path / "config.json", data), environ={})
    assert "není platný JSON" in message and str(tmp_path / "hesla.json") in message
    assert canary not in message and "oops" not in message


@pytest.mark.parametrize("content", [["a", "Kanarek-7Qx"], None, "Kanarek-7Qx", 42])
def test_passwords_file_not_an_object(tmp_path: Path, content: Any) -> None:
    write(tmp_path / "hesla.json", content)
    data = {"passwords_file": "hesla.json", "accounts": [account("a")]}
    message = refusal(write(tmp_path / "config.json", data), environ={})
    assert "není platný JSON tvaru" in message
    assert "Kanarek" not in message


def test_passwords_file_bom_and_non_string_values(tmp_path: Path) -> None:
    (tmp_path / "hesla.json").write_bytes(b"\xef\xbb\xbf" + json.dumps({"a": APP, "b": 5}).encode())
    data = {"passwords_file": "hesla.json", "accounts": [account("a"), account("b")]}
    message = refusal(write(tmp_path / "config.json", data), environ={})
    assert "schránka `b` nemá heslo v souboru hesel" in message
    assert "`a`" not in message


@pytest.mark.parametrize("value", [None, "", "   "])
def test_passwords_file_missing_entry(tmp_path: Path, value: str | None) -> None:
    hesla = write(tmp_path / "hesla.json", {} if value is None else {"a": value})
    data = {"passwords_file": "hesla.json", "accounts": [account("a")]}
    message = refusal(write(tmp_path / "config.json", data), environ={})
    assert f"schránka `a` nemá heslo v souboru hesel `{hesla}`" in message


@pytest.mark.parametrize("name", ["constructor", "tostring", "hasownproperty", "valueof", "get", "keys"])
def test_passwords_file_only_own_keys(tmp_path: Path, name: str) -> None:
    # only the file's own entries count: no built-in attribute may pass for a password
    write(tmp_path / "hesla.json", {"jina": APP})
    data = {"passwords_file": "hesla.json", "accounts": [account(name)]}
    message = refusal(write(tmp_path / "config.json", data), environ={})
    assert f"schránka `{name}` nemá heslo v souboru hesel" in message


def test_passwords_file_entry_named_constructor(tmp_path: Path) -> None:
    write(tmp_path / "hesla.json", {"constructor": APP, "__class__": "x", "__proto__": "y"})
    data = {"passwords_file": "hesla.json", "accounts": [account("constructor")]}
    assert load_config(write(tmp_path / "config.json", data), environ={}).accounts[0].password == APP


def test_literal_and_env_win_over_passwords_file(tmp_path: Path) -> None:
    write(tmp_path / "hesla.json", {"a": "zzzzzzzzzzzzzzzz", "b": "zzzzzzzzzzzzzzzz"})
    data = {
        "passwords_file": "hesla.json",
        "accounts": [account("a", password=APP), account("b", password_env="H")],
    }
    config = load_config(write(tmp_path / "config.json", data), environ={"H": "yyyyyyyyyyyyyyyy"})
    assert [a.password for a in config.accounts] == [APP, "yyyyyyyyyyyyyyyy"]


def test_secret_files(tmp_path: Path) -> None:
    hesla = write(tmp_path / "hesla.json", {"b": APP})
    # a passwords file counts even when nobody uses it; the config only with a literal password
    env_only = write(
        tmp_path / "env.json", {"passwords_file": "hesla.json", "accounts": [account("a", password_env="H")]}
    )
    assert load_config(env_only, environ={"H": APP}).secret_files == (hesla,)
    literal = write(tmp_path / "lit.json", {"accounts": [account("a", password=APP), account("b", password_env="H")]})
    assert load_config(literal, environ={"H": APP}).secret_files == (literal,)
    both = write(
        tmp_path / "both.json",
        {"passwords_file": "hesla.json", "accounts": [account("a", password=APP), account("b")]},
    )
    assert load_config(both, environ={}).secret_files == (hesla, both)
    none = write(tmp_path / "none.json", {"accounts": [account("a", password_env="H")]})
    assert load_config(none, environ={"H": APP}).secret_files == ()


def test_account_equality_reflects_password(tmp_path: Path) -> None:
    path = write(tmp_path / "config.json", {"accounts": [account("a", password_env="H")]})
    first = load_config(path, environ={"H": APP}).accounts[0]
    same = load_config(path, environ={"H": APP}).accounts[0]
    other = load_config(path, environ={"H": "zzzzzzzzzzzzzzzz"}).accounts[0]
    assert first == same and first != other
    assert hash(first) == hash(same)
