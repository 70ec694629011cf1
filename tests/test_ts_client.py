"""The official TypeScript MCP clients drive `--demo`: SDK 1.x (what Claude Code is built on) and v2.

tests/ts_client/client.mjs calls every tool successfully and 30+ times with errors; the SDK throws
if any structuredContent breaks the tool's outputSchema, which is how error bodies used to be
lost. It runs twice: with `@modelcontextprotocol/sdk` 1.32, which connects with `initialize` on
2025-11-25, and with the v2 client `@modelcontextprotocol/client` 2.4 (v2 left the one `sdk`
package for `client` and `server`) in its `auto` mode,
which asks `server/discover` first and so speaks the stateless revision 2026-07-28.

The test installs the pinned packages itself (`npm ci` in tests/ts_client, once; see
tests/support/node.py) and skips only when node is missing, never in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.node import installed_packages
from support.waiting import wait_until

HERE = Path(__file__).resolve().parent / "ts_client"
PROJECT = HERE.parent.parent


def server_command() -> list[str]:
    """`uv run mcp-multi-gmail --demo` as the README says; the venv's script when uv is absent."""
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "run", "--project", str(PROJECT), "mcp-multi-gmail", "--demo"]
    return [str(Path(sys.executable).parent / "mcp-multi-gmail"), "--demo"]


@pytest.mark.parametrize(
    ("sdk", "protocol"), [("1", "2025-11-25"), ("2", "2026-07-28")], ids=["sdk-1.32", "client-2.4"]
)
def test_typescript_sdk_client_reads_every_result(tmp_path: Path, sdk: str, protocol: str) -> None:
    node = installed_packages(HERE, "the TypeScript client test")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    env["TMPDIR"] = str(tmp_path)  # the demo's folder, checked below
    done = subprocess.run(
        [node, str(HERE / "client.mjs"), sdk, *server_command()],
        cwd=PROJECT,
        capture_output=True,
        env=env,
        timeout=300,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 0, f"stdout:\n{out}\nstderr:\n{err[-4000:]}"
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["protocol"] == protocol
    assert len(summary["succeeded"]) == 24
    codes = [error["code"] for error in summary["errors"]]
    assert len(codes) >= 30
    # Each of this round's tools refused at least once, readably (an invitation question, a past date).
    refused = {error["tool"] for error in summary["errors"]}
    assert {"mg_respond_invitation", "mg_remind", "mg_awaiting_replies"} <= refused
    assert {
        "invalid_input",
        "account_unknown",
        "not_found",
        "label_forbidden",
        "send_forbidden",
        "duplicate_send",
    } <= set(codes)
    # The client closed stdin: the demo cleans up, which may end a moment after the client (a busy machine).
    wait_until(lambda: not list(tmp_path.glob("mcp-multi-gmail-demo-*")), 30, "the demo's folder removed")
