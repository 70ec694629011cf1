"""The Node-based client tests' own installer (tests/support/node.py): a fresh clone needs no step
before `uv run pytest`, a missing node is a visible skip, and in CI never a silent pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from support import node


def no_node(monkeypatch: pytest.MonkeyPatch) -> None:
    real = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **kw: None if name == "node" else real(name, *a, **kw))


def test_missing_node_is_a_visible_skip(monkeypatch: pytest.MonkeyPatch) -> None:
    no_node(monkeypatch)
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"node is not installed: the X test needs Node\.js"):
        node.require_node("the X test")


@pytest.mark.parametrize("value", ["true", "1", "yes"])
def test_missing_node_fails_in_ci(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    no_node(monkeypatch)
    monkeypatch.setenv("CI", value)
    with pytest.raises(pytest.fail.Exception, match="CI must run it"):
        node.require_node("the X test")


def test_ci_script_sets_ci_and_installs_nothing_itself() -> None:
    """`.ci/run` leaves the installing to the tests (so CI proves a fresh clone needs no step) and
    turns their skip into a failure."""
    script = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert "export CI=true" in script.split("uv run pytest", 1)[0]
    assert "npm ci" not in script


@pytest.mark.parametrize("folder", ["ts_client", "claude_code"])
def test_every_node_package_is_pinned_exactly_with_a_lock(folder: str) -> None:
    here = Path(__file__).resolve().parent / folder
    pinned = json.loads((here / "package.json").read_text(encoding="utf-8"))["dependencies"]
    lock = json.loads((here / "package-lock.json").read_text(encoding="utf-8"))
    for name, version in pinned.items():
        assert version[0].isdigit(), f"{name} {version}: pin an exact version"
        assert lock["packages"][f"node_modules/{name}"]["version"] == version
    assert lock["packages"][""]["dependencies"] == pinned
