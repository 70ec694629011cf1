"""The command line: version, start-up order, Czech diagnostics on stderr, nothing on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from mcp_multi_gmail import __version__
from support import ROOT, SERVER_SCRIPT

OSOBNI = {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}
SCRIPT = SERVER_SCRIPT


def run(
    args: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    return subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        cwd=cwd,
        timeout=60,
    )


def test_version_from_console_script() -> None:
    done = subprocess.run([str(SCRIPT), "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout == f"mcp-multi-gmail {__version__}\n"


def test_trial_run_loads_announces_and_exits(write_config: Callable[..., Path]) -> None:
    path = write_config([OSOBNI], download_dir="prilohy")
    done = run(["--config", str(path)])
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    assert f"mcp-multi-gmail {__version__} běží, nastavených schránek: 1" in done.stderr
    assert str(path.parent / "prilohy") in done.stderr
    assert OSOBNI["password"] not in done.stderr


def test_config_found_through_mg_config_and_cwd(write_config: Callable[..., Path], tmp_path: Path) -> None:
    path = write_config([OSOBNI])
    assert run([], env={"MG_CONFIG": str(path)}).returncode == 0
    (tmp_path / "config.json").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    assert run([], cwd=tmp_path).returncode == 0


def test_config_error_prints_only_the_message_and_exits_1(tmp_path: Path) -> None:
    path = tmp_path / "spatne.json"
    path.write_text(
        '{"accounts": [{"name": "x", "address": "x@example.com", "password": "tajneheslo123", "label_prefix": "a"}]}',
        encoding="utf-8",
    )
    done = run(["--config", str(path)])
    assert done.returncode == 1
    assert done.stdout == ""
    assert "label_prefix" in done.stderr
    assert "Traceback" not in done.stderr
    assert "tajneheslo123" not in done.stderr


def test_missing_config_file_names_the_path(tmp_path: Path) -> None:
    done = run(["--config", str(tmp_path / "chybi.json")])
    assert done.returncode == 1 and "chybi.json" in done.stderr and done.stdout == ""


def test_placeholder_password_is_a_warning_not_an_error(write_config: Callable[..., Path]) -> None:
    path = write_config([{**OSOBNI, "password": "SEM_VLOZ_HESLO_APLIKACE"}])
    done = run(["--config", str(path)])
    assert done.returncode == 0
    assert "POZOR:" in done.stderr and done.stdout == ""


def test_unlabelled_mailbox_without_unread_only_warns_at_start_up(write_config: Callable[..., Path]) -> None:
    """Such a window never clears; the start-up report says so before the server runs."""
    path = write_config(
        [
            {**OSOBNI, "processed_label": None},
            {**OSOBNI, "name": "cteni", "processed_label": None, "unread_only": True},
        ]
    )
    done = run(["--config", str(path)])
    assert done.returncode == 0 and done.stdout == ""
    [warning] = [line for line in done.stderr.splitlines() if "processed_label" in line]
    assert warning.startswith("POZOR: schránka „osobni“") and '"unread_only": true' in warning
    assert "cteni" not in done.stderr
    assert done.stderr.index("POZOR:") < done.stderr.index("běží")
    checked = run(["--check-config", str(path)])  # the same start-up report, checked without serving
    assert warning in checked.stdout.splitlines()


def test_endpoint_override_must_be_loopback(write_config: Callable[..., Path]) -> None:
    path = write_config([OSOBNI])
    done = run(["--config", str(path)], env={"MG_GMAIL_ENDPOINT": "10.0.0.1:993:465:587"})
    assert done.returncode == 1
    assert "MG_GMAIL_ENDPOINT" in done.stderr and "10.0.0.1" in done.stderr
    done = run(["--config", str(path)], env={"MG_GMAIL_ENDPOINT": "127.0.0.1:1993:1465:1587"})
    assert done.returncode == 0
    assert "POZOR" in done.stderr and "MG_GMAIL_ENDPOINT" in done.stderr


def test_secrets_in_git_warning_for_a_config_holding_a_password(
    write_config: Callable[..., Path], tmp_path: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    path = write_config([OSOBNI])
    done = run(["--config", str(path)])
    assert done.returncode == 0
    assert "POZOR" in done.stderr and str(path) in done.stderr
    (tmp_path / ".gitignore").write_text(path.name + "\n", encoding="utf-8")
    done = run(["--config", str(path)])
    assert "POZOR" not in done.stderr


def test_json_config_written_by_windows_notepad_with_bom(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_text("\ufeff" + json.dumps({"accounts": [OSOBNI]}), encoding="utf-8")
    assert run(["--config", str(path)]).returncode == 0


# ---------------------------------------------------------------- version 2.0.0


def test_version_is_2_0_0_in_package_cli_and_changelog() -> None:
    # It replaces 1.5.0 and changes the Message-ID form: a major version.
    root = ROOT
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["version"] == __version__ == "2.0.0"
    assert run(["--version"]).stdout == "mcp-multi-gmail 2.0.0\n"
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    first_section = next(line for line in changelog.splitlines() if line.startswith("## "))
    assert first_section.startswith("## [2.0.0]")
    lock = tomllib.loads((root / "uv.lock").read_text(encoding="utf-8"))
    assert {"name": "mcp-multi-gmail", "version": "2.0.0"}.items() <= next(
        p for p in lock["package"] if p["name"] == "mcp-multi-gmail"
    ).items()


# ---------------------------------------------------------------- --config without a path


@pytest.mark.parametrize("args", [["--config"], ["--config", "--demo"], ["--config="], ["--config", " "]])
def test_config_without_a_path_is_the_czech_message_and_exit_1(args: list[str]) -> None:
    done = run(args)
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == "chyba: --config potřebuje cestu k souboru s nastavením\n"


# ---------------------------------------------------------------- --wait argument problems


def watcher(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    return run(["--wait", *args], env={"MG_WATCH_DIR": env.pop("state_dir"), **env})


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        (["--since"], ["--since potřebuje hodnotu ve tvaru jmeno=kotva"]),
        (["--config"], ["--config potřebuje cestu k souboru s nastavením"]),
        (
            ["--interval", "--since", "osobni=2026-11-01", "--max", "--hours="],
            ["--interval potřebuje dobu, třeba 5m", "--max potřebuje dobu", "--hours potřebuje rozsah hodin"],
        ),
        (
            ["--since", "osobni=zítra", "--interval", "10s", "--hours"],
            ["--hours potřebuje", "kotva „zítra“", "--interval „10s“"],
        ),
    ],
)
def test_watcher_argument_problems_are_one_chyba_line_with_exit_6(
    write_config: Callable[..., Path], tmp_path: Path, args: list[str], problems: list[str]
) -> None:
    # Exit 6 means "bad start, read the line and fix it"; argparse's 2 would read as a crash and the
    # assistant would restart the watcher with the same typo over and over.
    path = write_config([OSOBNI])
    done = watcher(["--config", str(path), *args] if "--config" not in args else args, state_dir=str(tmp_path))
    assert done.returncode == 6, done.stderr
    assert done.stdout.startswith("chyba: ") and done.stdout.count("\n") == 1, done.stdout
    found = done.stdout.removeprefix("chyba: ").rstrip("\n").split("; ")
    assert len(found) == len(problems), found
    for got, wanted in zip(found, problems, strict=True):
        assert got.startswith(wanted), (got, wanted)
    assert done.stderr == ""  # no argparse usage text, no English
    assert not (tmp_path / "wait.owner").exists()


def test_watcher_ignores_unknown_arguments_with_a_pozor_line(write_config: Callable[..., Path], tmp_path: Path) -> None:
    path = write_config([OSOBNI])
    done = watcher(
        ["--config", str(path), "--bogus", "--since", "osobni=zítra", "--lang", "en", "extra"], state_dir=str(tmp_path)
    )
    assert done.returncode == 6
    # Only the real problem is reported; the unknown ones are skipped, as 1.5.0 skipped them.
    assert done.stdout.startswith("chyba: kotva „zítra“") and "bogus" not in done.stdout
    assert "POZOR: hlídač přeskočil neznámé argumenty: --bogus --lang en extra\n" in done.stderr
