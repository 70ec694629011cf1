"""The peer, `mcp-email-server`, in a virtual environment of its own (it needs mcp 1.x; we run mcp 2.x).

Created with `python3 -m venv` and `pip install mcp-email-server==VERSION` on the first run and
reused afterwards. When that fails (no network, no such version) the benchmark still measures our
server and every peer cell says why not.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from common import HERE, log

PEER_VENV = HERE / ".peer-venv"
PEER_PACKAGE = "mcp-email-server"
PEER_VERSION = "1.13.3"  # the version the README tables were measured with; --peer-version to change


@dataclass
class PeerStatus:
    available: bool
    version: str | None = None
    reason: str | None = None
    command: Path | None = None


def _installed_version(python: Path) -> str | None:
    probe = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version({PEER_PACKAGE!r}))"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() if probe.returncode == 0 else None


def ensure_peer(version: str, venv: Path = PEER_VENV) -> PeerStatus:
    """The peer's command, installed into `venv` when it is not there yet."""
    python = venv / "bin" / "python"
    command = venv / "bin" / PEER_PACKAGE
    if python.exists() and _installed_version(python) == version and command.exists():
        return PeerStatus(True, version, command=command)
    base = shutil.which("python3") or sys.executable
    try:
        if not python.exists():
            log(f"creating {venv} ({base} -m venv)")
            subprocess.run([base, "-m", "venv", str(venv)], check=True, capture_output=True, text=True)
        log(f"installing {PEER_PACKAGE}=={version} into {venv}")
        pip = subprocess.run(
            [str(python), "-m", "pip", "install", "--quiet", f"{PEER_PACKAGE}=={version}"],
            capture_output=True,
            text=True,
            check=False,
            timeout=900,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return PeerStatus(False, reason=f"could not create the peer's venv: {error}")
    if pip.returncode != 0:
        tail = " ".join((pip.stderr or pip.stdout).strip().splitlines()[-3:])
        return PeerStatus(False, reason=f"pip install {PEER_PACKAGE}=={version} failed: {tail[:400]}")
    installed = _installed_version(python)
    if installed != version or not command.exists():
        return PeerStatus(False, reason=f"{PEER_PACKAGE} {version} not importable after install ({installed})")
    return PeerStatus(True, version, command=command)
