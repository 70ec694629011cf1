"""Miládka's add-on layout, the location guard and the release marker."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from mcp_multi_gmail import layout as layout_mod
from mcp_multi_gmail.layout import (
    GUARD_MESSAGE,
    AddonLayout,
    check_location,
    default_download_dir,
    detect_layout,
    is_release_build,
)


def make_vault(tmp_path: Path, kind: str, *, version: str | None = "file") -> Path:
    vault = tmp_path / "vault"
    project = vault / kind / "mcp-multi-gmail"
    project.mkdir(parents=True)
    if version == "file":
        (vault / ".miladka").mkdir()
        (vault / ".miladka" / "VERSION").write_text("2.0\n", encoding="utf-8")
    elif version == "dir":
        (vault / ".miladka" / "VERSION").mkdir(parents=True)
    return project


@pytest.mark.parametrize(("kind", "download"), [(".doplnky", "vstupy/prilohy"), (".addons", "inbox/attachments")])
def test_detect_layout_and_defaults(tmp_path: Path, kind: str, download: str) -> None:
    project = make_vault(tmp_path, kind)
    found = detect_layout(project)
    assert found == AddonLayout(vault_root=tmp_path / "vault", kind=kind, addon_dir=project)  # type: ignore[arg-type]
    assert default_download_dir(found) == tmp_path / "vault" / download
    assert check_location(project, release=True) is None


def test_no_layout_elsewhere(tmp_path: Path) -> None:
    project = tmp_path / "src-checkout" / "mcp-multi-gmail"
    project.mkdir(parents=True)
    assert detect_layout(project) is None
    assert default_download_dir(None) == Path(tempfile.gettempdir()) / "mcp-multi-gmail"


def test_wrong_folder_name_refused(tmp_path: Path) -> None:
    project = make_vault(tmp_path, "doplnky")  # without the dot
    reason = check_location(project, release=True)
    assert reason is not None and str(project) in reason and ".doplnky" in reason


def test_version_missing_refused(tmp_path: Path) -> None:
    project = make_vault(tmp_path, ".doplnky", version=None)
    reason = check_location(project, release=True)
    assert reason is not None and str(tmp_path / "vault") in reason and ".miladka/VERSION" in reason


def test_version_directory_refused(tmp_path: Path) -> None:
    project = make_vault(tmp_path, ".addons", version="dir")
    assert check_location(project, release=True) is not None


def test_source_checkout_runs_anywhere(tmp_path: Path) -> None:
    assert check_location(tmp_path, release=False) is None
    assert check_location(make_vault(tmp_path, "x", version=None), release=False) is None


def test_guard_message_two_lines() -> None:
    czech, english = GUARD_MESSAGE.split("\n")
    assert "Miládk" in czech and "https://miladka.cz" in czech
    assert "add-on" in english and "https://miladka.cz" in english


def test_release_marker_absent_in_checkout() -> None:
    assert is_release_build() is False


def test_release_marker_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    def fake_find_spec(name: str) -> object:
        seen.append(name)
        return object()

    monkeypatch.setattr("importlib.util.find_spec", fake_find_spec)
    assert is_release_build() is True
    assert seen == ["mcp_multi_gmail._release"]


def test_project_dir_holds_pyproject() -> None:
    assert (layout_mod.project_dir() / "pyproject.toml").is_file()
