"""Turning a path written in the configuration into an absolute one."""

from __future__ import annotations

import os
from pathlib import Path


def absolute_from(base: Path, written: str) -> Path:
    """`written` as an absolute path; a relative one is taken from `base`, never from the cwd."""
    candidate = Path(written).expanduser()
    if not candidate.is_absolute():
        candidate = base / candidate
    # normpath folds `..` without following symlinks, so messages show the path the user wrote.
    return Path(os.path.normpath(candidate))
