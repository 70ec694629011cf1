"""Whether the process holding a token is alive (mail/tokens.py): a running process holds it, one
that ended or was killed and not yet reaped (a zombie) holds nothing, whatever the process is
called, and asking never signals it. Found by mutation testing (docs/en/development.md)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.mail.undo import tokens
from support import wait_until

# A child that renames itself (Linux: /proc/self/comm), says it is ready, and reports any SIGHUP.
CHILD = """
import signal, sys
signal.signal(signal.SIGHUP, lambda *_: print("HUP", flush=True))
with open("/proc/self/comm", "w", encoding="utf-8") as comm:
    comm.write(sys.argv[1])
print("ready", flush=True)
sys.stdin.read()
"""

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")


@pytest.fixture
def child(request: pytest.FixtureRequest) -> Iterator[subprocess.Popen[str]]:
    name: str = request.param
    with subprocess.Popen(
        [sys.executable, "-c", CHILD, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
        yield process
        process.kill()


def held_by(pid: int) -> dict[str, Any]:
    record: dict[str, Any] = {"state": tokens.PLANNED}
    tokens.hold(record, busy="busy", used="used")
    record["holder"]["pid"] = pid
    return record


# Names with a non-ASCII letter and with ") Z", which a reading of /proc/<pid>/stat must not take
# for the state field.
NAMES = ["mcp-multi-gmail", "přijímač", "mg) Z x"]


@pytest.mark.parametrize("child", NAMES, indirect=True)
def test_a_running_process_holds_its_token_and_is_not_signalled(child: subprocess.Popen[str]) -> None:
    assert tokens.held(held_by(child.pid))
    assert child.stdin is not None and child.stdout is not None
    child.stdin.close()  # the child ends; a SIGHUP it got would be on its output first
    assert child.stdout.read() == "" and child.wait() == 0


@pytest.mark.parametrize("child", NAMES, indirect=True)
def test_a_killed_process_not_yet_reaped_holds_nothing(child: subprocess.Popen[str]) -> None:
    os.kill(child.pid, signal.SIGKILL)
    # Until its parent reaps it, the process is a zombie: os.kill(pid, 0) still succeeds on it.
    stat = Path(f"/proc/{child.pid}/stat")
    wait_until(lambda: stat.read_bytes().rpartition(b")")[2].split()[:1] == [b"Z"], what="the zombie")
    assert not tokens.held(held_by(child.pid))


def test_a_process_of_another_user_holds_its_token(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_allowed(pid: int, sig: int) -> None:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(os, "kill", not_allowed)
    assert tokens.held(held_by(os.getpid()))


def test_without_proc_a_live_process_holds_its_token(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_proc(self: Path, *args: Any, **kwargs: Any) -> str:
        raise FileNotFoundError(str(self))

    record = held_by(os.getpid())
    monkeypatch.setattr(Path, "read_text", no_proc)
    assert tokens.held(record)
