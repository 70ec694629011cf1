"""The tests' runtime factory: a runtime built the way the server builds one, through `Runtime.load`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mcp_multi_gmail.runtime import Runtime


def load_runtime(config_path: Path, environ: Mapping[str, str], state_dir: Path | None = None) -> Runtime:
    """A runtime for `config_path` that starts like a fresh server process (nothing remembered)."""
    return Runtime.load(config_path, environ=environ, state_dir=state_dir)
