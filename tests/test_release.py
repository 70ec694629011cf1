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
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from mcp import Client, StdioServerParameters

from gmail_emulator import GmailEmulator
from mcp_multi_gmail import __version__
from mcp_multi_gmail.layout import GUARD_MESSAGE, check_location
from mcp_multi_gmail.startup import repair_line
from support import ROOT, gmail_env

BUILD_SCRIPT = ROOT / "scripts" / "build_release.py"
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
    venv_bin = str(Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin"))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MG_") and k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH")
    }
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin)
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
    (out / "wait-known.json").write_text("{}", encoding="utf-8")
    (out / "src" / "mcp_multi_gmail" / "stale.py").write_text("", encoding="utf-8")
    again = build("--out", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / ".venv" / "marker").is_file() and (out / "wait-known.json").is_file()
    assert not (out / "src" / "mcp_multi_gmail" / "stale.py").exists()
    assert "wait-known.json" not in verify_sums(out)


def test_build_refuses_a_foreign_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    foreign = tmp_path / "notes"
    foreign.mkdir()
    (foreign / "important.md").write_text("keep me", encoding="utf-8")
    script = load_build_script()
    assert script.main(["--out", str(foreign)]) == 1
    assert "chyba:" in capsys.readouterr().err
    assert [p.name for p in foreign.iterdir()] == ["important.md"]
    assert script.main(["--vault", str(tmp_path / "missing")]) == 1


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
