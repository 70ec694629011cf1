"""The server process with a deadline below the configuration's floor of 10 s, for deadline tests.

Usage: python tests/support/short_deadline.py SECONDS [the server's arguments...]

Runs exactly what the `mcp-multi-gmail` script runs, with every runtime loaded (at start, and
again by a reload that ends repair mode) through `Runtime.load(call_timeout_s=SECONDS)`, the
test-only override. A test of what happens at the deadline then waits a second or two, not ten.
"""

from __future__ import annotations

import sys
from functools import partial

from mcp_multi_gmail.cli import main
from mcp_multi_gmail.runtime import Runtime


def run() -> None:
    seconds = float(sys.argv.pop(1))
    Runtime.load = partial(Runtime.load, call_timeout_s=seconds)  # type: ignore[method-assign]
    main()


if __name__ == "__main__":
    run()
