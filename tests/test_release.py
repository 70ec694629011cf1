"""The release build: the location guard, and the add-on folder started exactly as Miládka starts it.

The uv-based tests build the add-on into a temporary vault and run `uv run --no-dev --project
.doplnky/mcp-multi-gmail mcp-multi-gmail --config system/multigmail.json` from the vault root.
The first run creates a venv in the add-on folder from uv's cache, so they take a while.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import uuid
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from gmail_emulator import GmailEmulator
from mcp_multi_gmail import __version__
from mcp_multi_gmail.layout import GUARD_MESSAGE, check_location
from mcp_multi_gmail.startup import repair_line
from mcp_multi_gmail.watch.loop import NEW_MAIL_ADVICE
from support import ROOT, gmail_env
from support.release import user_shell_env

BUILD_SCRIPT = ROOT / "scripts" / "build_release.py"
# The watcher's and the send journal's files in the add-on folder: every upgrade keeps them.
KEPT = ("wait.owner", "wait-known.json", "send-journal.json", ".send-journal.lock")
ADDON = Path(".doplnky") / "mcp-multi-gmail"
CONFIG = Path("system") / "multigmail.json"
TIMEOUT = 300
# One mailbox of the emulator fixture (tests/conftest.py).
MAILBOX = {
    "name": "osobni",
    "address": "osobni@example.cz",
    "password": "osobniheslohesla",
    "processed_label": "Asistent",
}


# ------------------------------------------------------------------ the guard on temporary layouts


def layout(tmp_path: Path, folder: str = ".doplnky", version: str | None = "file") -> Path:
    vault = tmp_path / "vault"
    project = vault / folder / "mcp-multi-gmail"
    project.mkdir(parents=True)
    if version == "file":
        (vault / ".miladka").mkdir()
        (vault / ".miladka" / "VERSION").write_text("2.1\n", encoding="utf-8")
    elif version == "dir":
        (vault / ".miladka" / "VERSION").mkdir(parents=True)
    return project


@pytest.mark.parametrize("folder", [".doplnky", ".addons"])
def test_guard_allows_the_addon_folder(tmp_path: Path, folder: str) -> None:
    assert check_location(layout(tmp_path, folder), release=True) is None


def test_guard_needs_miladka_version(tmp_path: Path) -> None:
    reason = check_location(layout(tmp_path, version=None), release=True)
    assert reason is not None and ".miladka/VERSION" in reason


def test_guard_refuses_version_as_a_directory(tmp_path: Path) -> None:
    reason = check_location(layout(tmp_path, version="dir"), release=True)
    assert reason is not None and ".miladka/VERSION" in reason


@pytest.mark.parametrize("folder", ["doplnky", "addons", "plugins", ".Doplnky"])
def test_guard_refuses_other_folder_names(tmp_path: Path, folder: str) -> None:
    project = layout(tmp_path, folder)
    reason = check_location(project, release=True)
    assert reason is not None and str(project) in reason


def test_source_checkout_runs_anywhere(tmp_path: Path) -> None:
    for project in (layout(tmp_path, "elsewhere", version=None), tmp_path / "x" / "y"):
        assert check_location(project, release=False) is None
    assert not (ROOT / "src" / "mcp_multi_gmail" / "_release.py").exists()


# ------------------------------------------------------------------ the build


def find_uv() -> list[str]:
    from_env = os.environ.get("UV", "").strip()
    if from_env and Path(from_env).is_file():
        return [from_env]
    found = shutil.which("uv")
    if found:
        return [found]
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    pytest.skip("uv is not installed (neither $UV, uv on PATH nor the uv Python package); CI installs it")


def shell_env(emulator: GmailEmulator | None = None) -> dict[str, str]:
    """The caller's environment as a user's shell has it: no outer venv, no MG_* left over."""
    env = user_shell_env()
    if emulator is not None:
        env.update(gmail_env(emulator))
    return env


def load_build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_release", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BUILD_SCRIPT), *args],
        capture_output=True,
        text=True,
        env=shell_env(),
        timeout=TIMEOUT,
        check=False,
    )


@pytest.fixture(scope="module")
def uv() -> list[str]:
    return find_uv()


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory, uv: list[str]) -> Path:
    """A Miládka vault with the release build installed in .doplnky/mcp-multi-gmail/."""
    root = tmp_path_factory.mktemp("release") / "vault"
    (root / ".miladka").mkdir(parents=True)
    (root / ".miladka" / "VERSION").write_text("2.1\n", encoding="utf-8")
    (root / "system").mkdir()
    (root / CONFIG).write_text(json.dumps({"accounts": [MAILBOX]}, indent=2), encoding="utf-8")
    done = build("--vault", str(root))
    assert done.returncode == 0, done.stderr
    assert "sestaven" in done.stdout
    return root


def verify_sums(addon: Path) -> list[str]:
    listed: list[str] = []
    for row in (addon / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, name = row.split("  ", 1)
        assert hashlib.sha256((addon / name).read_bytes()).hexdigest() == digest, name
        listed.append(name)
    assert listed == sorted(listed)
    return listed


def test_build_contents(vault: Path) -> None:
    addon = vault / ADDON
    files = sorted(p.relative_to(addon).as_posix() for p in addon.rglob("*") if p.is_file() and ".venv" not in p.parts)
    for needed in (
        "pyproject.toml",
        "uv.lock",
        "README.md",
        "LICENSE",
        "NOTICE",
        "CHANGELOG.md",
        "docs/pro-asistenta.md",
        "docs/pro-asistenta-nastaveni.md",
        "docs/pro-asistenta-potize.md",
        "SHA256SUMS",
        "src/mcp_multi_gmail/__init__.py",
        "src/mcp_multi_gmail/cli.py",
        "src/mcp_multi_gmail/_release.py",
        "src/mcp_multi_gmail/data/pro-asistenta.md",
        "src/mcp_multi_gmail/data/pro-asistenta-nastaveni.md",
        "src/mcp_multi_gmail/data/pro-asistenta-potize.md",
    ):
        assert needed in files, needed
    # The README's reference pages travel with it (the guide and --check-config send 1.5.0 users there).
    pages = set(re.findall(r"\]\((docs/[^)#\s]+)", (addon / "README.md").read_text(encoding="utf-8")))
    assert "docs/prechod-z-1.5.0.md" in pages
    assert pages - set(files) == {"docs/architecture.md"}  # only the developers' page stays in the clone
    assert not [f for f in files if "gmail_emulator" in f or "__pycache__" in f or f.endswith(".pyc")]
    assert not [f for f in files if f.startswith(("tests/", "benchmarks/", ".ci/", "scripts/"))]
    assert {f.split("/")[0] for f in files} == {
        "pyproject.toml",
        "uv.lock",
        "README.md",
        "LICENSE",
        "NOTICE",
        "CHANGELOG.md",
        "docs",
        "src",
        "SHA256SUMS",
    }
    marker = (addon / "src" / "mcp_multi_gmail" / "_release.py").read_text(encoding="utf-8")
    assert f'VERSION = "{__version__}"' in marker

    with (addon / "pyproject.toml").open("rb") as handle:
        release = tomllib.load(handle)
    with (ROOT / "pyproject.toml").open("rb") as handle:
        source = tomllib.load(handle)
    assert release["project"]["dependencies"] == source["project"]["dependencies"]
    assert release["project"]["version"] == source["project"]["version"] == __version__
    assert release["project"]["scripts"] == {"mcp-multi-gmail": "mcp_multi_gmail.cli:main"}
    assert release["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == ["src/mcp_multi_gmail"]
    assert "dependency-groups" not in release
    lock_text = (addon / "uv.lock").read_text(encoding="utf-8")
    assert 'name = "mcp-multi-gmail"' in lock_text

    listed = verify_sums(addon)
    assert sorted(listed) == sorted(f for f in files if f != "SHA256SUMS")
    sha256sum = shutil.which("sha256sum")
    if sha256sum is not None:
        checked = subprocess.run(
            [sha256sum, "--quiet", "-c", "SHA256SUMS"], cwd=addon, capture_output=True, text=True, check=False
        )
        assert checked.returncode == 0, checked.stdout + checked.stderr


def test_rebuild_keeps_venv_and_watcher_state(tmp_path: Path, uv: list[str]) -> None:
    out = tmp_path / "vault" / ".addons" / "mcp-multi-gmail"
    assert build("--out", str(out)).returncode == 0
    (out / ".venv").mkdir()
    (out / ".venv" / "marker").write_text("x", encoding="utf-8")
    state = {name: f"{name} of the earlier build" for name in KEPT}
    for name, text in state.items():
        (out / name).write_text(text, encoding="utf-8")
    (out / "src" / "mcp_multi_gmail" / "stale.py").write_text("", encoding="utf-8")
    again = build("--out", str(out))
    assert again.returncode == 0, again.stderr
    assert f"Předchozí sestavení v {out.resolve()}: {__version__}." in again.stdout
    assert "Ponecháno beze změny: .send-journal.lock, .venv, send-journal.json, wait-known.json, wait.owner" in (
        again.stdout
    )
    assert (out / ".venv" / "marker").is_file()
    assert {name: (out / name).read_text(encoding="utf-8") for name in KEPT} == state
    assert not (out / "src" / "mcp_multi_gmail" / "stale.py").exists()
    assert not set(KEPT) & set(verify_sums(out))


def test_build_refuses_a_foreign_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "important.md").write_text("keep me", encoding="utf-8")
    script = load_build_script()
    assert script.main(["--out", str(foreign)]) == 1
    assert "chyba:" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["important.md"]
    assert script.main(["--vault", str(tmp_path / "missing")]) == 1


# ------------------------------------------------------------------ upgrading a 1.5.0 add-on folder


def snapshot(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` with its bytes (None for a folder): what "nothing changed" compares."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes() if p.is_file() else None) for p in sorted(folder.rglob("*"))
    }


def node_addon(vault: Path, kind: str = ".doplnky") -> Path:
    """An add-on folder as 1.5.0 leaves it: the bundle, its SHA256SUMS and the watcher's two files."""
    (vault / ".miladka").mkdir(parents=True, exist_ok=True)
    (vault / ".miladka" / "VERSION").write_text("2.1\n", encoding="utf-8")
    addon = vault / kind / "mcp-multi-gmail"
    addon.mkdir(parents=True)
    bundle = b"#!/usr/bin/env node\n// mcp-multi-gmail 1.5.0 (esbuild bundle)\n"
    (addon / "mcp-multi-gmail.mjs").write_bytes(bundle)
    (addon / "SHA256SUMS").write_text(f"{hashlib.sha256(bundle).hexdigest()}  mcp-multi-gmail.mjs\n", encoding="utf-8")
    (addon / "wait.owner").write_text("48211 1759900000000 k2v9q1x", encoding="utf-8")
    (addon / "wait-known.json").write_text('{"version": 1, "known": {}}', encoding="utf-8")
    return addon


def staged_build(folder: Path, version: str) -> Path:
    """A build laid out as `assemble` writes it (only its top-level shape matters to the swap)."""
    files = {
        "CHANGELOG.md": "c",
        "LICENSE": "l",
        "NOTICE": "n",
        "README.md": "r",
        "docs/pro-asistenta.md": "d",
        "pyproject.toml": f'[project]\nname = "mcp-multi-gmail"\nversion = "{version}"\n',
        "src/mcp_multi_gmail/__init__.py": "",
        "uv.lock": "u",
    }
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    sums = "".join(f"{hashlib.sha256(text.encode()).hexdigest()}  {name}\n" for name, text in sorted(files.items()))
    (folder / "SHA256SUMS").write_text(sums, encoding="utf-8")
    return folder


@pytest.mark.parametrize("earlier", ["1.5.0", "2.x"])
def test_an_upgrade_stopped_at_any_step_can_be_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, earlier: str
) -> None:
    """Ctrl+C or a crash in the middle of replacing the program leaves a folder the next run still
    recognises as an earlier build (never "not empty and no earlier build"), and that run completes."""
    script = load_build_script()
    steps = 0
    stop_at = 0

    def counted(real: Any) -> Any:
        def step(*args: Any, **kwargs: Any) -> Any:
            nonlocal steps
            steps += 1
            if steps == stop_at:
                raise KeyboardInterrupt
            return real(*args, **kwargs)

        return step

    for stop_at in range(1, 40):
        steps = 0
        root = tmp_path / str(stop_at)
        if earlier == "1.5.0":
            addon = node_addon(root / "vault")
        else:
            addon = staged_build(root / "vault" / ".doplnky" / "mcp-multi-gmail", "2.0.0")
            (addon / "wait-known.json").write_text("{}", encoding="utf-8")
        staging = staged_build(root / "staging", "2.1.0")
        previous = script.survey(addon)
        with monkeypatch.context() as patched:
            patched.setattr(os, "replace", counted(os.replace))
            patched.setattr(shutil, "rmtree", counted(shutil.rmtree))
            patched.setattr(Path, "unlink", counted(Path.unlink))
            try:
                script._swap(addon, staging, previous)
                finished = True
            except KeyboardInterrupt:
                finished = False
        again = script.survey(addon)  # raises BuildError on a folder it cannot account for
        assert again.builds and "wait-known.json" in again.kept, (stop_at, sorted(os.listdir(addon)))
        script._swap(addon, staged_build(root / "staging2", "2.1.0"), again)
        assert script._version_2x(addon / "pyproject.toml") == "2.1.0"
        assert not (addon / "mcp-multi-gmail.mjs").exists()
        if finished:
            break
    assert finished  # the loop reached a swap that nothing stopped


def mail_for(address: str) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = "anna@example.org"
    msg["To"] = address
    msg["Subject"] = "Podklady"
    msg["Message-ID"] = f"<{uuid.uuid4().hex}@example.org>"
    msg.set_content("Dobrý den, posílám podklady.")
    return msg


@pytest.mark.parametrize("kind", [".doplnky", ".addons"])
def test_upgrade_refuses_files_it_cannot_account_for(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    vault = tmp_path / "vault"
    addon = node_addon(vault, kind)
    (addon / "poznamky.md").write_text("moje", encoding="utf-8")
    (addon / "zaloha").mkdir()
    before = snapshot(vault)
    assert load_build_script().main(["--vault", str(vault)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"chyba: ve složce {addon.resolve()} je vedle předchozího sestavení 1.5.0 (Node.js)")
    assert "poznamky.md, zaloha/; nic jsem nezměnil" in err
    assert "mcp-multi-gmail.mjs" not in err and "wait" not in err
    assert snapshot(vault) == before


def test_upgrade_over_1_5_0_keeps_the_watcher_state_and_the_watcher_runs(
    tmp_path: Path, uv: list[str], emulator: GmailEmulator
) -> None:
    vault = tmp_path / "vault"
    addon = node_addon(vault)
    (vault / "system").mkdir()
    (vault / CONFIG).write_text(json.dumps({"accounts": [MAILBOX]}, indent=2), encoding="utf-8")
    # 1.5.0's state: the mail it already reported, with the envelope's angle brackets.
    reported = emulator.deliver(MAILBOX["address"], mail_for(MAILBOX["address"]))
    known = json.dumps({"version": 1, "known": {"osobni": [f"<{reported.header_id}>"]}}, indent=2)
    (addon / "wait-known.json").write_text(known, encoding="utf-8")
    owner = (addon / "wait.owner").read_bytes()

    done = build("--vault", str(vault))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert f"Předchozí sestavení v {addon.resolve()}: 1.5.0 (Node.js)." in lines
    assert "Nahrazeno: SHA256SUMS, mcp-multi-gmail.mjs" in lines
    assert "Ponecháno beze změny: wait-known.json, wait.owner" in lines
    assert not (addon / "mcp-multi-gmail.mjs").exists()
    assert (addon / "wait.owner").read_bytes() == owner
    assert (addon / "wait-known.json").read_text(encoding="utf-8") == known
    assert "pyproject.toml" in verify_sums(addon)
    assert [p.name for p in (vault / ".doplnky").iterdir()] == ["mcp-multi-gmail"]  # no staging left

    # The watcher of the new build reads 1.5.0's state: only the mail 1.5.0 had not reported wakes it.
    emulator.deliver(MAILBOX["address"], mail_for(MAILBOX["address"]))
    today = datetime.now(UTC).date().isoformat()
    waited = start(uv, vault, ADDON.as_posix(), shell_env(emulator),
                   "--wait", "--since", f"osobni={today}", "--max", "1m", "--interval", "1m")  # fmt: skip
    assert waited.returncode == 0, waited.stderr
    assert waited.stdout.splitlines() == [f"nová pošta: osobni 1. {NEW_MAIL_ADVICE}"]
    saved = json.loads((addon / "wait-known.json").read_text(encoding="utf-8"))
    assert len(saved["known"]["osobni"]) == 2 and reported.header_id in {
        k.strip("<>") for k in saved["known"]["osobni"]
    }


# ------------------------------------------------------------------ the archive to install from


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, uv: list[str]) -> Path:
    dist = tmp_path_factory.mktemp("dist")
    (dist / "SHA256SUMS").write_text(f"{'0' * 64}  mcp-multi-gmail-1.9.9.tar.gz\n", encoding="utf-8")
    done = build("--archive", "--dist", str(dist))
    assert done.returncode == 0, done.stderr
    made = dist / f"mcp-multi-gmail-{__version__}.tar.gz"
    assert f"Archiv: {made}" in done.stdout
    return made


def test_archive_and_its_sums(archive: Path) -> None:
    dist = archive.parent
    # The archive and the installer beside it, nothing else (no staging left).
    assert sorted(p.name for p in dist.iterdir()) == ["SHA256SUMS", "build_release.py", archive.name]
    assert (dist / "build_release.py").read_bytes() == BUILD_SCRIPT.read_bytes()
    rows = (dist / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    # The earlier archive's line stays; this one's is added (sha256sum -c --ignore-missing checks it).
    assert rows == [
        f"{hashlib.sha256(BUILD_SCRIPT.read_bytes()).hexdigest()}  build_release.py",
        f"{'0' * 64}  mcp-multi-gmail-1.9.9.tar.gz",
        f"{hashlib.sha256(archive.read_bytes()).hexdigest()}  {archive.name}",
    ]
    with tarfile.open(archive) as tar:
        names = tar.getnames()
        assert all(m.isfile() or m.isdir() for m in tar.getmembers())
        assert {m.mtime for m in tar.getmembers()} == {0}
    top = f"mcp-multi-gmail-{__version__}"
    assert {n.split("/", 1)[0] for n in names} == {top}
    for needed in (
        "pyproject.toml",
        "uv.lock",
        "SHA256SUMS",
        "src/mcp_multi_gmail/_release.py",
        "docs/pro-asistenta.md",
    ):
        assert f"{top}/{needed}" in names, needed
    assert not [n for n in names if "gmail_emulator" in n or "/tests/" in n or n.endswith(".pyc")]


def test_install_from_the_archive_over_1_5_0(archive: Path, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    addon = node_addon(vault)
    known = (addon / "wait-known.json").read_bytes()
    # The installer published beside the archive, run outside any clone of the repository.
    installer = archive.parent / "build_release.py"
    done = subprocess.run(
        [sys.executable, str(installer), "--vault", str(vault), "--from", str(archive)],
        cwd=tmp_path, capture_output=True, text=True, env=shell_env(), timeout=TIMEOUT, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"Doplněk mcp-multi-gmail {__version__} nainstalován z archivu {archive.name} do {addon.resolve()}." in (
        done.stdout
    )
    assert "Nahrazeno: SHA256SUMS, mcp-multi-gmail.mjs" in done.stdout
    assert (addon / "wait-known.json").read_bytes() == known and not (addon / "mcp-multi-gmail.mjs").exists()
    listed = verify_sums(addon)
    assert "src/mcp_multi_gmail/_release.py" in listed and "pyproject.toml" in listed


@pytest.mark.parametrize("damage", ["archive", "sums", "no sums", "no line"])
def test_install_from_a_damaged_archive_changes_nothing(
    archive: Path, tmp_path: Path, damage: str, capsys: pytest.CaptureFixture[str]
) -> None:
    dist = tmp_path / "download"
    dist.mkdir()
    copy = dist / archive.name
    shutil.copy2(archive, copy)
    shutil.copy2(archive.parent / "SHA256SUMS", dist / "SHA256SUMS")
    if damage == "archive":
        data = bytearray(copy.read_bytes())
        data[len(data) // 2] ^= 0x01
        copy.write_bytes(bytes(data))
    elif damage == "sums":
        text = (dist / "SHA256SUMS").read_text(encoding="utf-8")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        (dist / "SHA256SUMS").write_text(text.replace(digest, digest[::-1]), encoding="utf-8")
    elif damage == "no sums":
        (dist / "SHA256SUMS").unlink()
    else:
        (dist / "SHA256SUMS").write_text(f"{'0' * 64}  mcp-multi-gmail-1.9.9.tar.gz\n", encoding="utf-8")
    vault = tmp_path / "vault"
    node_addon(vault)
    before = snapshot(vault)
    assert load_build_script().main(["--vault", str(vault), "--from", str(copy)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("chyba: ") and "nic jsem nezměnil" in err.lower()
    expected = {
        "archive": "nesouhlasí se SHA256SUMS",
        "sums": "nesouhlasí se SHA256SUMS",
        "no sums": "chybí SHA256SUMS",
        "no line": f"nemá řádek pro {archive.name}",
    }[damage]
    assert expected in err
    assert snapshot(vault) == before


# ------------------------------------------------------------------ started as Miládka starts it


def start(uv: list[str], cwd: Path, project: str, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    """The vault's .mcp.json command (README) (uv run --no-dev --project …), stdin at EOF."""
    return subprocess.run(
        [*uv, "run", "--no-dev", "--project", project, "mcp-multi-gmail", "--config", str(CONFIG), *extra],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=TIMEOUT,
        check=False,
    )


def copy_addon(vault: Path, target: Path) -> None:
    shutil.copytree(vault / ADDON, target, ignore=shutil.ignore_patterns(".venv", "__pycache__"))


@pytest.mark.anyio
async def test_release_runs_from_the_vault_root(vault: Path, uv: list[str], emulator: GmailEmulator) -> None:
    env = shell_env(emulator)
    done = start(uv, vault, ADDON.as_posix(), env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    attachments = vault.resolve() / "vstupy" / "prilohy"
    assert f"mcp-multi-gmail {__version__} běží, nastavených schránek: 1, přílohy do: {attachments}" in done.stderr
    assert "Miládk" not in done.stderr

    # And it really serves: the SDK client over stdio, from the vault root, against the emulator.
    params = StdioServerParameters(
        command=uv[0],
        args=[*uv[1:], "run", "--no-dev", "--project", ADDON.as_posix(), "mcp-multi-gmail", "--config", str(CONFIG)],
        env=env,
        cwd=vault,
    )
    async with Client(params) as client:
        result = await client.call_tool("mg_list_accounts", {"verify": True})
        assert result.is_error is False and result.structured_content is not None
        assert result.structured_content["failures"] == []
        assert [a["account"] for a in result.structured_content["accounts"]] == ["osobni"]


def test_release_refuses_outside_the_vault(vault: Path, uv: list[str], emulator: GmailEmulator, tmp_path: Path) -> None:
    copy_addon(vault, tmp_path / "elsewhere" / "mcp-multi-gmail")
    (tmp_path / "system").mkdir()
    shutil.copy2(vault / CONFIG, tmp_path / CONFIG)
    env = shell_env(emulator)

    done = start(uv, tmp_path, "elsewhere/mcp-multi-gmail", env)
    assert done.returncode == 1, done.stderr  # repair mode until stdin ends, then code 1
    assert done.stderr.endswith(GUARD_MESSAGE + "\n" + repair_line() + "\n")
    assert "nastavených schránek" not in done.stderr and done.stdout == ""

    waited = start(uv, tmp_path, "elsewhere/mcp-multi-gmail", env, "--wait", "--since", "x=2026-01-01")
    assert waited.returncode == 6, waited.stderr
    assert waited.stdout == f"chyba: {GUARD_MESSAGE.replace(chr(10), ' ')}\n"


def test_release_refuses_without_miladka_version(
    vault: Path, uv: list[str], emulator: GmailEmulator, tmp_path: Path
) -> None:
    other = tmp_path / "not-a-vault"
    copy_addon(vault, other / ADDON)
    (other / "system").mkdir()
    shutil.copy2(vault / CONFIG, other / CONFIG)
    done = start(uv, other, ADDON.as_posix(), shell_env(emulator))
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert lines[-3:] == [*GUARD_MESSAGE.splitlines(), repair_line()]
    assert "mcp-multi-gmail je doplněk Miládky" in lines[-3] and "is an add-on for Miládka" in lines[-2]
