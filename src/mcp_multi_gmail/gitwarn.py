"""Warn when a file with app passwords (or the Google sign-in) sits in a git repository without being ignored.

Best effort: no git, no repository, a missing folder or any git failure means silence.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

_TIMEOUT_S = 5
# Variables that would point git at some other repository than the one the file is in.
_REPO_OVERRIDES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR")


def _git(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    env = {k: v for k, v in os.environ.items() if k not in _REPO_OVERRIDES}
    try:
        return subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # git missing, folder missing, timeout
        return None


def _exposed(file: Path) -> bool:
    inside = _git(["rev-parse", "--is-inside-work-tree"], file.parent)
    if inside is None or inside.returncode != 0 or inside.stdout.strip() != "true":
        return False
    ignored = _git(["check-ignore", "--quiet", "--", str(file)], file.parent)
    return ignored is not None and ignored.returncode == 1  # 0 = ignored, 128 = error


def secrets_in_git_warnings(files: Sequence[Path]) -> list[str]:
    """One Czech "POZOR: …" line per secret file that git would happily commit."""
    return [
        f"POZOR: {file} leží v repozitáři git a není v něm ignorovaný, přitom obsahuje hesla aplikací "
        "nebo přihlášení ke Googlu. "
        "Přidejte ho do .gitignore (v Miládce řádek .miladka/secrets/), nebo ho přesuňte mimo repozitář, "
        "dřív než cokoli commitnete: heslo, které se jednou dostane do historie, už z ní nejde odstranit."
        for file in files
        if _exposed(file)
    ]
