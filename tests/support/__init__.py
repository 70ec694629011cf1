"""Helpers shared by the test directories: waiting for a condition, the MCP handshake, script paths,
the runtime factory, the emulator's MG_GMAIL_* variables.

pytest puts `tests/` on sys.path (the directory holds a conftest.py and no __init__.py), so test
modules import this package as `support`.
"""

from __future__ import annotations

from support.emulator import gmail_env
from support.paths import ROOT, SERVER_SCRIPT
from support.rpc import INITIALIZED, initialize_request
from support.runtimes import load_runtime
from support.waiting import wait_until, wait_until_async

__all__ = [
    "INITIALIZED",
    "ROOT",
    "SERVER_SCRIPT",
    "gmail_env",
    "initialize_request",
    "load_runtime",
    "wait_until",
    "wait_until_async",
]
