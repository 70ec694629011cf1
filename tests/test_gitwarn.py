"""The secrets-in-git warning."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from mcp_multi_gmail.gitwarn import secrets_in_git_warnings

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Keep git from finding a repository above the temp dir, and from the user's settings.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def git_init(folder: Path) -> None:
    subprocess.run(["git", "init", "-q", str(folder)], check=True, capture_output=True)


def test_unignored_file_in_repo_warns(isolated: Path) -> None:
    repo = isolated / "vault"
    git_init(repo)
    (repo / "system").mkdir()
    secret = repo / "system" / "hesla.json"
    secret.write_text("{}", encoding="utf-8")
    warnings = secrets_in_git_warnings([secret])
    assert len(warnings) == 1
    assert warnings[0].startswith("POZOR: ") and str(secret) in warnings[0] and ".gitignore" in warnings[0]


def test_ignored_file_is_silent(isolated: Path) -> None:
    repo = isolated / "vault"
    git_init(repo)
    (repo / ".gitignore").write_text(".miladka/secrets/\n", encoding="utf-8")
    (repo / ".miladka" / "secrets").mkdir(parents=True)
    secret = repo / ".miladka" / "secrets" / "hesla.json"
    secret.write_text("{}", encoding="utf-8")
    assert secrets_in_git_warnings([secret]) == []


def test_outside_repo_is_silent(isolated: Path) -> None:
    secret = isolated / "hesla.json"
    secret.write_text("{}", encoding="utf-8")
    assert secrets_in_git_warnings([secret]) == []


def test_missing_folder_is_silent(isolated: Path) -> None:
    assert secrets_in_git_warnings([isolated / "nic" / "hesla.json"]) == []


def test_git_missing_is_silent(isolated: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = isolated / "vault"
    git_init(repo)
    secret = repo / "hesla.json"
    secret.write_text("{}", encoding="utf-8")
    monkeypatch.setenv("PATH", str(isolated / "empty-bin"))
    assert secrets_in_git_warnings([secret]) == []


def test_one_warning_per_exposed_file(isolated: Path) -> None:
    repo = isolated / "vault"
    git_init(repo)
    (repo / ".gitignore").write_text("ignored.json\n", encoding="utf-8")
    files = [repo / "a.json", repo / "ignored.json", repo / "b.json"]
    for f in files:
        f.write_text("{}", encoding="utf-8")
    warnings = secrets_in_git_warnings(files)
    assert [str(repo / "a.json") in w for w in warnings] == [True, False]
    assert str(repo / "b.json") in warnings[1]
