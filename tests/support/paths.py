"""Where the repository and the installed console script are."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The console script uv installs beside the interpreter running the tests.
SERVER_SCRIPT = Path(sys.executable).parent / "mcp-multi-gmail"
