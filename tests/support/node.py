"""Node-based client tests install their pinned npm packages themselves, once, before they run.

`uv run pytest` on a fresh clone must pass with nothing run before it, so a test that
drives a Node client (tests/ts_client, tests/claude_code) calls `installed_packages(folder)`:
when `node_modules` does not hold what `package-lock.json` pins, it runs `npm ci` there (into
the git-ignored `node_modules`). A stamp written after a successful `npm ci` makes later runs
skip the install; a file lock makes the pytest-xdist workers take turns, so one installs and the
others find the stamp.

Only a missing `node` skips, with the reason shown in pytest's summary; in CI (`CI` set, as
`.ci/run` does) even that fails, so the suite can never pass there without these tests.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

STAMP = ".mcp-multi-gmail-npm-ci"
NPM_CI_TIMEOUT_S = 900  # the Claude Code package carries a native binary of about 240 MB


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require_node(what: str) -> str:
    """The `node` executable; a visible skip without it (a failure in CI)."""
    node = shutil.which("node")
    if node is None:
        reason = f"node is not installed: {what} needs Node.js 20 or newer"
        if in_ci():
            pytest.fail(f"{reason} (CI must run it: install Node.js)", pytrace=False)
        pytest.skip(reason)
    return node


def _locked(folder: Path) -> contextlib.AbstractContextManager[None]:
    """The install lock of `folder`, in the temp folder, not in the clone."""
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
    return exclusive(Path(tempfile.gettempdir()) / f"mcp-multi-gmail-npm-{key}.lock")


@contextlib.contextmanager
def exclusive(path: Path) -> Iterator[None]:
    """An exclusive lock on `path` between processes (the xdist workers take turns)."""
    with path.open("a+b") as handle:
        if sys.platform == "win32":
            import msvcrt

            handle.seek(0)
            while True:
                try:
                    msvcrt.locking(handle.fileno(), msvcrt.LK_LOCK, 1)
                    break
                except OSError:  # LK_LOCK gives up after 10 s; keep waiting for the other worker
                    continue
            try:
                yield
            finally:
                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
        else:
            import fcntl

            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _fingerprint(folder: Path, node: str) -> str:
    """What an install depends on: the lock file, the platform (native optional packages), node."""
    version = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60, check=False).stdout
    lock = hashlib.sha256((folder / "package-lock.json").read_bytes()).hexdigest()
    return json.dumps({"lock": lock, "platform": sys.platform, "machine": platform.machine(), "node": version.strip()})


def _pinned_present(folder: Path) -> bool:
    pinned: dict[str, str] = json.loads((folder / "package.json").read_text(encoding="utf-8"))["dependencies"]
    for name, version in pinned.items():
        manifest = folder / "node_modules" / name / "package.json"
        if not manifest.is_file() or json.loads(manifest.read_text(encoding="utf-8")).get("version") != version:
            return False
    return True


def installed_packages(folder: Path, what: str) -> str:
    """Make `folder/node_modules` hold exactly what `folder/package-lock.json` pins; return `node`."""
    node = require_node(what)
    stamp = folder / "node_modules" / STAMP
    wanted = _fingerprint(folder, node)

    def ready() -> bool:
        return stamp.is_file() and stamp.read_text(encoding="utf-8") == wanted and _pinned_present(folder)

    if ready():
        return node
    with _locked(folder):
        if ready():  # another worker installed it while we waited
            return node
        npm = shutil.which("npm")
        if npm is None:
            pytest.fail(f"node is installed but npm is not: {what} installs its pinned packages with `npm ci`")
        env = {**os.environ, "DISABLE_AUTOUPDATER": "1"}
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=folder,
            capture_output=True,
            text=True,
            env=env,
            timeout=NPM_CI_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            pytest.fail(
                f"`npm ci` in {folder} failed ({done.returncode}):\n{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
            )
        if not _pinned_present(folder):
            pytest.fail(f"`npm ci` in {folder} did not install the versions package.json pins")
        stamp.write_text(wanted, encoding="utf-8")
    return node
