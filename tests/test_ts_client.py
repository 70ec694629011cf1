"""The official TypeScript MCP SDK 1.x client (what Claude Code is built on) drives `--demo`.

tests/ts_client/client.mjs calls every tool successfully and 20+ times with errors; its SDK throws
if any structuredContent breaks the tool's outputSchema, which is how error bodies used to be
lost. The test installs the pinned packages itself (`npm ci` in tests/ts_client, once; see
tests/support/node.py) and skips only when node is missing, never in CI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from support.node import installed_packages

HERE = Path(__file__).resolve().parent / "ts_client"
PROJECT = HERE.parent.parent


def server_command() -> list[str]:
    """`uv run mcp-multi-gmail --demo` as the README says; the venv's script when uv is absent."""
    uv = shutil.which("uv")
    if uv is not None:
        return [uv, "run", "--project", str(PROJECT), "mcp-multi-gmail", "--demo"]
    return [str(Path(sys.executable).parent / "mcp-multi-gmail"), "--demo"]


def test_typescript_sdk_client_reads_every_result(tmp_path: Path) -> None:
    node = installed_packages(HERE, "the TypeScript client test")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MG_")}
    env["TMPDIR"] = str(tmp_path)  # the demo's folder, checked below
    done = subprocess.run(
        [node, str(HERE / "client.mjs"), *server_command()],
        cwd=PROJECT,
        capture_output=True,
        env=env,
        timeout=300,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 0, f"stdout:\n{out}\nstderr:\n{err[-4000:]}"
    summary = json.loads(out.strip().splitlines()[-1])
    assert len(summary["succeeded"]) == 17
    codes = [error["code"] for error in summary["errors"]]
    assert len(codes) >= 15
    assert {
        "invalid_input",
        "account_unknown",
        "not_found",
        "label_forbidden",
        "send_forbidden",
        "duplicate_send",
    } <= set(codes)
    assert list(tmp_path.glob("mcp-multi-gmail-demo-*")) == []  # the client closed stdin: the demo cleaned up
