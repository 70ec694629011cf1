"""The release as a user has it: a vault laid out as the README describes, with the release build
installed by scripts/build_release.py, and the environment of the user's shell that starts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from mcp_multi_gmail.launcher import mcp_json_text
from support.paths import ROOT

CONFIG = Path("system") / "multigmail.json"
BUILD_TIMEOUT_S = 300


def build_release_vault(root: Path, accounts: list[dict[str, Any]]) -> Path:
    """`root` as the README's vault: .miladka/VERSION, system/multigmail.json with `accounts`, the
    README's .mcp.json, and the release build in its add-on folder (AssertionError when the build fails)."""
    (root / ".miladka").mkdir(parents=True)
    (root / ".miladka" / "VERSION").write_text("2.1\n", encoding="utf-8")
    (root / "system").mkdir()
    (root / CONFIG).write_text(json.dumps({"accounts": accounts}, ensure_ascii=False, indent=2), encoding="utf-8")
    (root / ".mcp.json").write_text(mcp_json_text(), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_release.py"), "--vault", str(root)],
        capture_output=True,
        text=True,
        env=env,
        timeout=BUILD_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return root


def user_shell_env(*, drop_prefixes: tuple[str, ...] = (), drop: tuple[str, ...] = ()) -> dict[str, str]:
    """The caller's environment as a user's shell has it: no outer venv (neither VIRTUAL_ENV,
    UV_PROJECT_ENVIRONMENT nor the venv's bin on PATH), no PYTHONPATH, no MG_* left over; nor any
    variable named in `drop` or starting with one of `drop_prefixes`."""
    venv_bin = str(Path(sys.prefix) / ("Scripts" if os.name == "nt" else "bin"))
    gone = ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT", "PYTHONPATH", *drop)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MG_", *drop_prefixes)) and k not in gone}
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and p != venv_bin]
    # The uv that runs the suite (`uv run` names it in $UV) comes first, as the user's own uv: a
    # version manager's shim in front of it (pyenv's runs a dozen shell scripts) costs ~0.1 s a start.
    uv = os.environ.get("UV", "").strip()
    if uv and Path(uv).is_file():
        path.insert(0, str(Path(uv).parent))
    env["PATH"] = os.pathsep.join(path)
    return env
