"""Is whoever started the watcher still there? Answered without stdin, which a host may not give.

Claude Code's Monitor runs the command as `bash -c …` with stdin from /dev/null, and `uv run`
stands between that shell and us, so our own parent outlives a host that crashed. What does not
outlive it is the chain of ancestors taken at start: when any of them ends, the process that
started the watcher is gone and the watcher ends too (docs/pro-asistenta-nastaveni.md, A14).

On Linux each ancestor is known by its pid and start time from /proc, so a reused pid is not
mistaken for the old process, and a zombie (ended, not yet reaped) counts as ended. Elsewhere on
POSIX the chain comes from `ps` once at start and liveness from `kill(pid, 0)`; on Windows only
the parent-pid check of the loop remains.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

_PROC = Path("/proc")
# How often the chain is looked at: the host's exit is noticed within this.
CHECK_S = 0.5


def _proc_stat(pid: int) -> tuple[int, str, str] | None:
    """(parent pid, state, start time) of `pid` from /proc, or None when it is gone."""
    try:
        text = (_PROC / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name is in brackets and may hold spaces or brackets itself: split after the last one.
    fields = text.rpartition(")")[2].split()
    if len(fields) < 20:
        return None
    return int(fields[1]), fields[0], fields[19]


def _ps_parent(pid: int) -> int | None:
    try:
        done = subprocess.run(
            ["ps", "-o", "ppid=", "-p", str(pid)], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = done.stdout.strip()
    return int(text) if text.isdigit() else None


Ancestor = tuple[int, str]  # pid, start time ("" where the system does not tell)


def ancestors(pid: int | None = None) -> list[Ancestor]:
    """Our parent, its parent, … up to (not including) init; empty where nothing can be learnt."""
    if os.name == "nt":
        return []
    chain: list[Ancestor] = []
    current = os.getpid() if pid is None else pid
    linux = _PROC.joinpath("self", "stat").is_file()
    for _ in range(64):  # a loop in a broken process table must not hang the start
        if linux:
            stat = _proc_stat(current)
            parent = stat[0] if stat is not None else None
        else:
            parent = _ps_parent(current)
        if parent is None or parent <= 1:
            break
        start = ""
        if linux:
            parent_stat = _proc_stat(parent)
            if parent_stat is None:
                break
            start = parent_stat[2]
        chain.append((parent, start))
        current = parent
    return chain


def alive(ancestor: Ancestor) -> bool:
    pid, start = ancestor
    if start:
        stat = _proc_stat(pid)
        return stat is not None and stat[2] == start and stat[1] not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, only belongs to someone else
    return True


def watch_ancestors(
    chain: list[Ancestor], on_gone: Callable[[], None], stop: threading.Event, every_s: float = CHECK_S
) -> threading.Thread | None:
    """Call `on_gone` once when an ancestor of `chain` ends (a daemon thread); None for an empty chain."""
    if not chain:
        return None

    def run() -> None:
        while not stop.wait(every_s):
            with contextlib.suppress(OSError, ValueError):
                if not all(alive(a) for a in chain):
                    on_gone()
                    return

    thread = threading.Thread(target=run, name="mg-watch-lifeline", daemon=True)
    thread.start()
    return thread
