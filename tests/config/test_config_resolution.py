"""Resolution: paths, defaults, signatures, labels, the collected report, and password secrecy."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.config import ConfigError, load_config
from mcp_multi_gmail.layout import AddonLayout

APP = "abcdefghijklmnop"
HINT = "dvoufázovým ověřením"


def account(name: str = "prace", **changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"name": name, "address": f"{name}@example.com", "password": APP}
    base.update(changes)
    return base


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def refusal(path: Path, **kwargs: Any) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(path, environ={}, **kwargs)
    return info.value.message


def without_password(acc: dict[str, Any]) -> dict[str, Any]:
    del acc["password"]
    return acc


def problem_lines(message: str) -> list[str]:
    return [line for line in message.splitlines() if line.startswith("  ")]


# --- defaults -------------------------------------------------------------------------------


def test_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "config.json", {"accounts": [account()]}), environ={})
    acc = config.accounts[0]
    assert (acc.shared, acc.work_scope, acc.unread_only, acc.can_send, acc.watch) == (
        False,
        "everything",
        False,
        False,
        False,
    )
    assert acc.assignment_labels == () and acc.my_label is None
    assert acc.allowed_recipients is None  # absent = no limit
    assert acc.processed_label == "processed"
    assert acc.classification_labels == {} and acc.signatures == {} and acc.aliases == ()
    assert config.quote_locale == "cs"
    assert config.download_dir == Path(tempfile.gettempdir()) / "mcp-multi-gmail"
    assert config.attachment_dirs == () and config.passwords_file is None
    assert config.watch_hours is None and config.watch_interval_ms is None


def test_explicit_values(tmp_path: Path) -> None:
    data = {
        "quote_locale": "en",
        "watch_hours": "22 - 6",
        "watch_interval": "90s",
        "accounts": [
            account(
                allowed_recipients=[],
                processed_label=None,
                work_scope="inbox",
                aliases=[{"address": "obchod@example.com", "name": "Obchod", "purpose": "nabídky"}],
            ),
            account("b", allowed_recipients=["@example.com"]),
        ],
    }
    config = load_config(write(tmp_path / "config.json", data), environ={})
    a, b = config.accounts
    assert a.allowed_recipients == () and b.allowed_recipients == ("@example.com",)
    assert a.processed_label is None and a.work_scope == "inbox"
    assert a.aliases[0].address == "obchod@example.com" and a.aliases[0].name == "Obchod"
    assert config.quote_locale == "en" and config.watch_hours == (22, 6)
    assert config.watch_interval_ms == 90_000


@pytest.mark.parametrize("value", ["pět", "30s", "0"])
def test_bad_watch_interval(tmp_path: Path, value: str) -> None:
    message = refusal(write(tmp_path / "config.json", {"watch_interval": value, "accounts": [account()]}))
    assert f'"watch_interval" je "{value}"' in message and '"1m"' in message


@pytest.mark.parametrize("value", ["9", "25-3", "9-9"])
def test_bad_watch_hours(tmp_path: Path, value: str) -> None:
    message = refusal(write(tmp_path / "config.json", {"watch_hours": value, "accounts": [account()]}))
    assert f'"watch_hours" je "{value}"' in message and '"9-19"' in message


def test_watch_idle_is_on_by_default_and_a_mailbox_may_differ_from_the_top_level(tmp_path: Path) -> None:
    path = write(tmp_path / "default.json", {"accounts": [account("prace"), account("tym", watch_idle=False)]})
    assert [a.watch_idle for a in load_config(path, environ={}).accounts] == [True, False]
    path = write(
        tmp_path / "off.json", {"watch_idle": False, "accounts": [account("prace"), account("tym", watch_idle=True)]}
    )
    assert [a.watch_idle for a in load_config(path, environ={}).accounts] == [False, True]


@pytest.mark.parametrize("where", ["top", "mailbox"])
@pytest.mark.parametrize("value", ["false", 0, None])
def test_watch_idle_takes_only_true_or_false(tmp_path: Path, where: str, value: object) -> None:
    body: dict[str, Any] = {"accounts": [account(watch_idle=value) if where == "mailbox" else account()]}
    if where == "top":
        body["watch_idle"] = value
    message = refusal(write(tmp_path / "config.json", body))
    assert "watch_idle" in message and "true nebo false" in message


# --- relative paths -------------------------------------------------------------------------


def test_paths_relative_to_config_dir_without_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    cfg_dir = tmp_path / "cfg"
    data = {
        "download_dir": "prilohy",
        "attachment_dirs": ["ven", "../spolecne", "/abs/dir"],
        "accounts": [account()],
    }
    config = load_config(write(cfg_dir / "config.json", data), environ={})
    assert config.download_dir == cfg_dir / "prilohy"
    assert config.attachment_dirs == (cfg_dir / "ven", tmp_path / "spolecne", Path("/abs/dir"))


def test_relative_config_path_becomes_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path / "system" / "config.json", {"download_dir": "d", "accounts": [account()]})
    monkeypatch.chdir(tmp_path)
    config = load_config(Path("system/config.json"), environ={})
    assert config.path == tmp_path / "system" / "config.json"
    assert config.download_dir == tmp_path / "system" / "d"


@pytest.mark.parametrize(("kind", "default"), [(".doplnky", "vstupy/prilohy"), (".addons", "inbox/attachments")])
def test_paths_relative_to_vault_with_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: Any, default: str
) -> None:
    vault = tmp_path / "vault"
    layout = AddonLayout(vault_root=vault, kind=kind, addon_dir=vault / kind / "mcp-multi-gmail")
    monkeypatch.chdir(tmp_path)
    (vault / "system" / "podpisy").mkdir(parents=True)
    (vault / "system" / "podpisy" / "s.txt").write_text("Jan\n\n", encoding="utf-8")
    data = {
        "download_dir": "vstupy/jinam",
        "attachment_dirs": ["vystupy"],
        "accounts": [account(signatures={"s": {"text_file": "podpisy/s.txt"}})],
    }
    path = write(vault / "system" / "multigmail.json", data)
    config = load_config(path, layout=layout, environ={})
    assert config.download_dir == vault / "vstupy" / "jinam"
    assert config.attachment_dirs == (vault / "vystupy",)
    # signatures stay relative to the config file even in the add-on layout
    assert config.accounts[0].signatures["s"].text == "Jan"
    defaults = load_config(write(vault / "system" / "b.json", {"accounts": [account()]}), layout=layout, environ={})
    assert defaults.download_dir == vault / default


# --- signatures -----------------------------------------------------------------------------


def test_signatures_literal_file_and_html_only(tmp_path: Path) -> None:
    (tmp_path / "plny.html").write_text("\ufeff<p>Jan&nbsp;Novák</p><div>tel. 1</div>  \n", encoding="utf-8")
    (tmp_path / "kratky.txt").write_text("Jan  \n\n", encoding="utf-8")
    sigs = {
        "plny": {"html_file": "plny.html"},
        "kratky": {"text_file": "kratky.txt"},
        "oba": {"text": "Jan \n", "html": "<b>Jan</b>"},
    }
    data = {"accounts": [account(signatures=sigs, default_signature="plny")]}
    acc = load_config(write(tmp_path / "config.json", data), environ={}).accounts[0]
    assert acc.signatures["plny"].html == "<p>Jan&nbsp;Novák</p><div>tel. 1</div>"
    assert acc.signatures["plny"].text == "Jan Novák\ntel. 1"
    assert acc.signatures["kratky"].text == "Jan" and acc.signatures["kratky"].html is None
    assert acc.signatures["oba"].text == "Jan" and acc.signatures["oba"].html == "<b>Jan</b>"
    assert acc.signatures["oba"].name == "oba" and acc.default_signature == "plny"


def test_signature_problems(tmp_path: Path) -> None:
    sigs = {
        "dva": {"text": "a", "text_file": "a.txt"},
        "dvahtml": {"html": "a", "html_file": "a.html"},
        "chybi": {"text_file": "nic.txt"},
        "prazdny": {"text": "  \n"},
        "nic": {},
    }
    data = {
        "accounts": [
            account(
                signatures=sigs,
                default_signature="chybi",
                aliases=[{"address": "x@example.com", "default_signature": "neni"}],
            )
        ]
    }
    message = refusal(write(tmp_path / "config.json", data))
    lines = problem_lines(message)
    assert '  schránka `prace`: podpis "dva" má zároveň "text" i "text_file"; ponechte jen jedno' in lines
    assert '  schránka `prace`: podpis "dvahtml" má zároveň "html" i "html_file"; ponechte jen jedno' in lines
    assert f'  schránka `prace`: podpis "chybi": soubor `{tmp_path / "nic.txt"}` nejde přečíst' in lines
    assert '  schránka `prace`: podpis "prazdny" je prázdný' in lines
    assert '  schránka `prace`: podpis "nic" nemá text ani HTML' in lines
    assert any("alias x@example.com" in line and '"neni"' in line for line in lines)
    assert len(lines) == 6  # the file-less "chybi" is still in signatures: no extra default line
    assert HINT not in message
    assert "je 6 problémů:" in message


def test_one_fault_one_line_for_signature(tmp_path: Path) -> None:
    data = {"accounts": [account(signatures={"s": {"text": "", "text_file": "x", "html_file": "nic.html"}})]}
    lines = problem_lines(refusal(write(tmp_path / "config.json", data)))
    assert len(lines) == 2  # both-keys + unreadable html, no "empty" on top
    assert not any("prázdný" in line for line in lines)


def test_default_signature_must_exist(tmp_path: Path) -> None:
    data = {"accounts": [account(default_signature="plny")]}
    message = refusal(write(tmp_path / "config.json", data))
    assert 'schránka `prace` odkazuje na podpis "plny", který v "signatures" není' in message


# --- labels ---------------------------------------------------------------------------------


def test_classification_inheritance(tmp_path: Path) -> None:
    data = {
        "classification_labels": {"Asistent/akce": "udělat", "Asistent/info": "jen číst"},
        "accounts": [
            account("a"),
            account("b", classification_labels={}),
            account("c", classification_labels={"X": "y"}),
        ],
    }
    a, b, c = load_config(write(tmp_path / "config.json", data), environ={}).accounts
    assert a.classification_labels == {"Asistent/akce": "udělat", "Asistent/info": "jen číst"}
    assert b.classification_labels == {} and c.classification_labels == {"X": "y"}


def test_classification_label_checks(tmp_path: Path) -> None:
    data = {
        "classification_labels": {"\\Important": "x", "Akce": "x", "akce": "y", "Processed": "z"},
        "accounts": [
            account("a"),
            account("b", processed_label="Hotovo", classification_labels={"hotovo": "x", "\\Starred": "y"}),
            account("c", processed_label=None),
        ],
    }
    lines = problem_lines(refusal(write(tmp_path / "config.json", data)))
    assert any(line.startswith("  classification_labels:") and "\\Important" in line for line in lines)
    assert any(line.startswith("  classification_labels:") and '"Akce", "akce"' in line for line in lines)
    assert any("`a`" in line and '"Processed"' in line and '"processed"' in line for line in lines)
    assert any("`b`" in line and '"\\Starred"' in line for line in lines)
    assert any("`b`" in line and '"hotovo"' in line and '"Hotovo"' in line for line in lines)
    assert not any("`c`" in line for line in lines)  # no processed label → nothing to collide with
    assert len(lines) == 5


def test_my_label_must_be_an_assignment_label(tmp_path: Path) -> None:
    ok = {"accounts": [account(assignment_labels=["Anna", "Beda"], my_label="anna")]}
    assert load_config(write(tmp_path / "ok.json", ok), environ={}).accounts[0].my_label == "anna"
    bad = {"accounts": [account(assignment_labels=["Anna"], my_label="Cyril"), account("b", my_label="Anna")]}
    lines = problem_lines(refusal(write(tmp_path / "bad.json", bad)))
    assert lines == [
        '  schránka `prace`: "my_label" je "Cyril", ale v "assignment_labels" takový štítek není',
        '  schránka `b`: "my_label" je "Anna", ale v "assignment_labels" takový štítek není',
    ]


# --- the collected report -------------------------------------------------------------------


@pytest.mark.parametrize(("count", "heading"), [(1, "je 1 problém:"), (3, "jsou 3 problémy:"), (5, "je 5 problémů:")])
def test_plural_agreement(tmp_path: Path, count: int, heading: str) -> None:
    accounts = [without_password(account(f"a{i}", password_env=f"H{i}")) for i in range(count)]
    path = write(tmp_path / "config.json", {"accounts": accounts})
    message = refusal(path)
    assert message.splitlines()[0] == f"V nastavení `{path}` {heading}"
    assert len(problem_lines(message)) == count
    assert message.splitlines()[-1].endswith(f"{HINT}.")


def test_hint_only_for_password_problems(tmp_path: Path) -> None:
    data = {"watch_hours": "9", "accounts": [account(default_signature="x")]}
    message = refusal(write(tmp_path / "config.json", data))
    assert "jsou 2 problémy:" in message
    assert HINT not in message and "Heslo aplikace" not in message


# --- secrecy --------------------------------------------------------------------------------

CANARY = "kanarekheslotest"  # 16 lower-case letters: also exercises the whitespace rule
SPACED = "kana rekh eslo test"
OTHER_CANARY = "Tajne-Heslo 42!"


def test_canary_password_never_leaks(tmp_path: Path) -> None:
    (tmp_path / "hesla.json").write_text(json.dumps({"c": OTHER_CANARY, "d": SPACED}), encoding="utf-8")
    sigs = {"s": {"text": "a", "text_file": "b"}}
    data = {
        "passwords_file": "hesla.json",
        "watch_hours": "9",
        "accounts": [
            account("a", password=SPACED, signatures=sigs, default_signature="zadny"),
            account("b", password=OTHER_CANARY, password_env="H"),
            without_password(account("c", my_label="x", processed_label="P", classification_labels={"p": "x"})),
            without_password(account("d")),
            account("e", password=f"{CANARY}SEM_VLOZ_HESLO_APLIKACE"),
            without_password(account("f", password_env="CHYBI")),
        ],
    }
    message = refusal(write(tmp_path / "config.json", data))
    assert len(problem_lines(message)) >= 7
    for secret in (CANARY, SPACED, OTHER_CANARY, "Tajne"):
        assert secret not in message

    # a config that loads: warnings and reprs stay clean too
    ok = {
        "passwords_file": "hesla.json",
        "accounts": [
            account("a", password=SPACED),
            without_password(account("c")),
            account("e", password=f"{OTHER_CANARY} SEM_VLOZ_HESLO_APLIKACE"),
            without_password(account("g", password_env="H")),
        ],
    }
    config = load_config(write(tmp_path / "ok.json", ok), environ={"H": SPACED})
    assert config.accounts[0].password == CANARY and config.accounts[1].password == OTHER_CANARY
    assert len(config.warnings) == 1
    shown = "\n".join([*config.warnings, repr(config), str(config), *(str(a) for a in config.accounts)])
    for secret in (CANARY, SPACED, OTHER_CANARY, "Tajne"):
        assert secret not in shown


# --- connection cap and call deadline ----------------------------------------------------------


def test_connection_cap_and_deadline_defaults_and_values(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "config.json", {"accounts": [account()]}), environ={})
    assert config.accounts[0].max_connections == 4 and config.call_timeout_s == 60
    chosen = {"accounts": [account(max_connections=1), account("doma", max_connections=10)], "call_timeout_s": 600}
    config = load_config(write(tmp_path / "config.json", chosen), environ={})
    assert [a.max_connections for a in config.accounts] == [1, 10] and config.call_timeout_s == 600


def test_connection_cap_and_deadline_out_of_range_are_reported_together(tmp_path: Path) -> None:
    data = {
        "accounts": [account(max_connections=0), account("doma", max_connections=11)],
        "call_timeout_s": 9,
    }
    lines = problem_lines(refusal(write(tmp_path / "config.json", data)))
    assert len(lines) == 3
    assert any('"call_timeout_s" je 9' in line and "od 10 do 600" in line for line in lines)
    assert any("`prace`" in line and '"max_connections" je 0' in line and "od 1 do 10" in line for line in lines)
    assert any("`doma`" in line and '"max_connections" je 11' in line for line in lines)


@pytest.mark.parametrize("value", ["4", 4.5, True, None])
def test_connection_cap_must_be_a_whole_number(tmp_path: Path, value: Any) -> None:
    message = refusal(write(tmp_path / "config.json", {"accounts": [account(max_connections=value)]}))
    assert "accounts.0.max_connections: musí být celé číslo" in message


# --- the sweep cap --------------------------------------------------------------------------------


def test_sweep_limit_default_top_level_and_per_account(tmp_path: Path) -> None:
    config = load_config(write(tmp_path / "config.json", {"accounts": [account()]}), environ={})
    assert config.accounts[0].sweep_limit == 1000
    chosen = {"accounts": [account(), account("doma", sweep_limit=10_000)], "sweep_limit": 1}
    config = load_config(write(tmp_path / "config.json", chosen), environ={})
    assert [a.sweep_limit for a in config.accounts] == [1, 10_000]


def test_sweep_limit_out_of_range_is_reported_in_czech(tmp_path: Path) -> None:
    data = {"accounts": [account(sweep_limit=0), account("doma", sweep_limit=10_001)], "sweep_limit": 20_000}
    lines = problem_lines(refusal(write(tmp_path / "config.json", data)))
    assert len(lines) == 3
    assert any(
        '"sweep_limit" je 20000' in line and "schránka" not in line and "od 1 do 10000" in line for line in lines
    )
    assert any("`prace`" in line and '"sweep_limit" je 0' in line and "jedno mg_sweep" in line for line in lines)
    assert any("`doma`" in line and '"sweep_limit" je 10001' in line for line in lines)


@pytest.mark.parametrize("value", ["1000", 10.5, True])
def test_sweep_limit_must_be_a_whole_number(tmp_path: Path, value: Any) -> None:
    message = refusal(write(tmp_path / "config.json", {"accounts": [account(sweep_limit=value)]}))
    assert "accounts.0.sweep_limit: musí být celé číslo" in message
