"""The tests' runtime factory: a runtime built the way the server builds one, through `Runtime.load`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from mcp_multi_gmail.runtime import Runtime


def load_runtime(
    config_path: Path, environ: Mapping[str, str], state_dir: Path | None = None, call_timeout_s: float | None = None
) -> Runtime:
    """A runtime for `config_path` that starts like a fresh server process (nothing remembered).

    `call_timeout_s` shortens every call's deadline below the configuration's floor of 10 s, for the
    tests of what happens at the deadline (tests/support/short_deadline.py does it for a process)."""
    return Runtime.load(config_path, environ=environ, state_dir=state_dir, call_timeout_s=call_timeout_s)
