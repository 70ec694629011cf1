"""`mcp-multi-gmail --check-config FILE`: the start-up report, then what changes since 1.5.0, as a real process."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.migration import GENERAL_NOTES
from mcp_multi_gmail.startup import repair_line
from support import gmail_env

# The fullest configuration the 1.5.0 documentation shows (its config.example.advanced.json).
CONFIG_1_5_0: dict[str, Any] = {
    "watch_hours": "9-19",
    "attachment_dirs": [],
    "quote_locale": "cs",
    "classification_labels": {
        "Asistent/akce": "uživatel má něco udělat",
        "Asistent/čeká": "čeká se na odpověď někoho jiného",
        "Asistent/info": "dobré vědět, nic se nedělá",
        "Asistent/hoří": "musí se vyřídit ještě dnes",
    },
    "accounts": [
        {
            "name": "prace",
            "address": "jan.novak@example.com",
            "password_env": "MG_PASSWORD_PRACE",
            "processed_label": "Asistent",
            "can_send": True,
            "allowed_recipients": ["@example.com", "someone@partner.example"],
            "signatures": {
                "plny": {"text": "Jan Novák\nředitel", "html": "<div>Jan Novák</div><div>ředitel</div>"},
                "kratky": {"text": "Jan"},
            },
            "default_signature": "plny",
            "aliases": [
                {
                    "address": "obchod@example.com",
                    "name": "Example - obchod",
                    "purpose": "poptávky, nabídky a ceníky",
                    "default_signature": "kratky",
                }
            ],
            "watch": True,
        },
        {
            "name": "tym",
            "address": "tym@example.com",
            "password_env": "MG_PASSWORD_TYM",
            "shared": True,
            "can_send": False,
            "work_scope": "inbox",
            "processed_label": "Asistent",
            "classification_labels": {},
            "assignment_labels": ["Anna", "Beda", "Cyril"],
            "my_label": "Anna",
        },
        {
            "name": "automaty",
            "address": "automaty@example.com",
            "password_env": "MG_PASSWORD_AUTOMATY",
            "work_scope": "inbox",
            "unread_only": True,
            "processed_label": None,
            "classification_labels": {},
        },
    ],
}
PASSWORD_ENV = {
    "MG_PASSWORD_PRACE": "prvniheslohesloo",
    "MG_PASSWORD_TYM": "druheheslohesloo",
    "MG_PASSWORD_AUTOMATY": "tretiheslohesloo",
}
SEND_NOTE = "- Odesílání (can_send): tutéž zprávu odeslanou podruhé během téhož dne (UTC) server odmítne"
SEND_CHANGES = "- Odesílání (can_send): server se před odesláním vždy přihlásí i do IMAPu"
HARD_LINKS = "- Přílohy (attachment_dirs): soubor s víc jmény (pevný odkaz, hard link) server nepřiloží"
WATCH = "- Hlídač (watch, watch_interval, watch_hours): novou poštu hlídá přes IMAP IDLE"


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    return subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**base, **env},
        cwd=cwd,
        timeout=60,
    )


def write(path: Path, config: dict[str, Any]) -> Path:
    path.write_text(json.dumps(config, ensure_ascii=False, indent=2), encoding="utf-8")
    return path


def notes_of(stdout: str) -> list[str]:
    _, sep, tail = stdout.partition("Co se pro toto nastavení mění proti verzi 1.5.0:\n")
    assert sep, stdout
    return tail.splitlines()


def test_the_1_5_0_example_would_start_and_connects_nowhere(emulator: GmailEmulator, tmp_path: Path) -> None:
    path = write(tmp_path / "multigmail.json", CONFIG_1_5_0)
    env = {**PASSWORD_ENV, **gmail_env(emulator)}
    emulator.reset_counters()
    done = run(["--check-config", str(path)], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    # The same lines a start prints before it announces itself (here: the emulator override warning).
    started = run(["--config", str(path)], env, tmp_path)
    assert started.returncode == 0
    start_lines = started.stderr.splitlines()
    assert start_lines[-1].startswith("mcp-multi-gmail 2.0.0 běží, nastavených schránek: 3, přílohy do: ")
    lines = done.stdout.splitlines()
    assert lines[: len(start_lines) - 1] == start_lines[:-1] and any("POZOR" in x for x in start_lines)
    summary = start_lines[-1].partition(" běží, ")[2]
    assert lines[len(start_lines) - 1] == f"V pořádku, server by naběhl: {summary}"
    # Nothing in this file changes meaning; only the send and watcher notes (it may send and is
    # watched; attachment_dirs is empty, so no attachment note) and what every user of 1.5.0 meets.
    notes = notes_of(done.stdout)
    assert notes[0].startswith(SEND_NOTE)
    assert notes[1].startswith(SEND_CHANGES) and "15 s (verze 1.5.0 3 s)" in notes[1] and "100 adresátů" in notes[1]
    assert notes[2].startswith(WATCH) and '"watch_idle": false' in notes[2]
    assert notes[3:] == [f"- {note}" for note in GENERAL_NOTES]
    assert emulator.connections() == 0 and emulator.smtp_sessions() == 0
    assert all(password not in done.stdout + done.stderr for password in PASSWORD_ENV.values())


def test_a_1_5_0_file_that_no_longer_starts_gets_every_migration_line(tmp_path: Path) -> None:
    config = copy.deepcopy(CONFIG_1_5_0)
    # What a 1.5.0 user may well have: relative folders (then taken from the working directory) and
    # classifications that 1.5.0 accepted but that Gmail treats as reserved or as the same label.
    config["download_dir"] = "dl"
    config["attachment_dirs"] = ["../ven/prilohy", str(tmp_path / "absolutni")]
    config["classification_labels"]["\\Starred"] = "hvězdička"
    config["classification_labels"]["asistent/AKCE"] = "totéž jinak velkými písmeny"
    config["accounts"][1]["classification_labels"] = {"asistent": "stejné jako štítek zpracování"}
    folder = tmp_path / "system"
    folder.mkdir()
    path = write(folder / "multigmail.json", config)
    elsewhere = tmp_path / "jinde"  # the working directory 1.5.0 would have resolved against
    elsewhere.mkdir()

    done = run(["--check-config", str(path)], PASSWORD_ENV, elsewhere)
    assert done.returncode == 1, done.stdout + done.stderr
    started = run(["--config", str(path)], PASSWORD_ENV, elsewhere)
    assert started.returncode == 1  # repair mode until stdin ends
    *report, last = started.stderr.splitlines()
    assert last == repair_line()
    assert report[0] == f"V nastavení `{path}` jsou 3 problémy:"
    lines = done.stdout.splitlines()
    assert lines[: len(report)] == report  # the same Czech report as a start
    assert lines[len(report)] == "Server by s tímto nastavením nenaběhl."

    notes = notes_of(done.stdout)
    changed = " (počítá se od složky s nastavením "
    assert notes[0] == (
        f'- relativní cesta "download_dir" "dl" teď znamená {folder / "dl"}{changed}{folder}; '
        "verze 1.5.0 ji počítala od pracovní složky, ve které server běžel)"
    )
    assert notes[1].startswith(
        f'- relativní cesta "attachment_dirs" "../ven/prilohy" teď znamená {tmp_path / "ven" / "prilohy"}{changed}'
    )
    refused = "verze 1.5.0 ho přijala, od 2.0.0 server s takovým nastavením nenaběhne"
    assert notes[2].startswith('- celý server: klasifikační štítek "\\Starred" začíná znakem „\\“')
    assert refused in notes[2]
    assert notes[3].startswith("- celý server: klasifikační štítky „Asistent/akce“, „asistent/AKCE“ se liší jen")
    assert notes[4].startswith(
        '- schránka `tym`: klasifikační štítek "asistent" je stejný jako štítek zpracování "Asistent"'
    )
    assert refused in notes[4]
    assert notes[5].startswith(SEND_NOTE)
    assert notes[6].startswith(SEND_CHANGES)
    assert notes[7].startswith(HARD_LINKS) and "send_forbidden" in notes[7]
    assert notes[8].startswith(WATCH)
    assert notes[9:] == [f"- {note}" for note in GENERAL_NOTES]
    assert "absolutni" not in done.stdout.split("Co se pro toto", 1)[1]  # absolute paths mean what they meant


def test_start_up_warnings_are_the_same_in_both(tmp_path: Path) -> None:
    config = {"accounts": [{"name": "osobni", "address": "osobni@example.cz", "password": "SEM_VLOZ_HESLO_APLIKACE"}]}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # a password file outside .gitignore
    path = write(tmp_path / "multigmail.json", config)
    done = run(["--check-config", str(path)], {}, tmp_path)
    started = run(["--config", str(path)], {}, tmp_path)
    assert done.returncode == started.returncode == 0
    warnings = started.stderr.splitlines()[:-1]
    assert len(warnings) == 2 and all(line.startswith("POZOR: ") for line in warnings)
    assert done.stdout.splitlines()[:2] == warnings
    # No send note: no mailbox here may send.
    assert notes_of(done.stdout) == [f"- {note}" for note in GENERAL_NOTES]


def test_unreadable_file_cannot_start(tmp_path: Path) -> None:
    done = run(["--check-config", str(tmp_path / "chybi.json")], {}, tmp_path)
    assert done.returncode == 1
    assert done.stdout.startswith(f"Nastavení `{tmp_path / 'chybi.json'}` nejde přečíst")
    assert "Server by s tímto nastavením nenaběhl." in done.stdout
