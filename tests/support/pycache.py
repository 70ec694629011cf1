"""The suite's compiled modules, written once before the pytest-xdist workers start.

On a fresh clone nothing is compiled yet, and every worker rewrites the asserts of all ~120 test
modules and compiles the project's modules itself, at the same moment: about 6 s of CPU per
worker. Here the controller writes the same files first, split over one process per core, so the
workers find them and only read them (docs/en/development.md). It writes exactly what pytest's
assertion rewriter and Python's import would write, with their own functions; a file already
current is left alone, and anything that fails here is simply done by the workers, as before.
"""

from __future__ import annotations

import compileall
import contextlib
import fnmatch
import os
import sys
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

# Modules imported plainly (not assert-rewritten): the project, the emulator, the tests' helpers.
PLAIN = ("src", "packages/gmail-emulator/src")
# A file that cannot be read, written or parsed here is left to pytest, which reports it itself.
FAILURES = (OSError, SyntaxError, ValueError)


def _files(config: pytest.Config, root: Path) -> tuple[list[Path], list[Path]]:
    """The files pytest rewrites (its python_files patterns and every conftest.py), and the rest."""
    patterns = [*config.getini("python_files"), "conftest.py"]
    rewritten: list[Path] = []
    plain = [path for folder in PLAIN for path in sorted((root / folder).rglob("*.py"))]
    for path in sorted((root / "tests").rglob("*.py")):
        if "node_modules" not in path.parts:
            rewritten_here = any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)
            (rewritten if rewritten_here else plain).append(path)
    return rewritten, plain


def _write(config: pytest.Config, rewritten: list[Path], plain: list[Path]) -> None:
    state = config.stash[rewrite.assertstate_key]
    for path in rewritten:
        cache = rewrite.get_cache_dir(path)
        pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
        if rewrite._read_pyc(path, pyc) is not None or not rewrite.try_makedirs(cache):
            continue
        source_hash, code = rewrite._rewrite_test(path, config)
        rewrite._write_pyc(state, code, source_hash, pyc)
    for path in plain:
        compileall.compile_file(path, quiet=2)


def write_before_workers(config: pytest.Config) -> None:
    """Compile the suite's modules once, one process per core, before the workers import them."""
    if sys.dont_write_bytecode or not hasattr(os, "fork"):
        return
    rewritten, plain = _files(config, config.rootpath)
    # The plugins the controller has already rewritten in memory (hypothesis, anyio, xdist): every
    # worker rewrites them again at its start unless their files are written too.
    hook = config.stash[rewrite.assertstate_key].hook
    rewritten += [path for path in getattr(hook, "_rewritten_names", {}).values() if path not in rewritten]
    jobs = max(1, min(os.cpu_count() or 1, 4))
    children = []
    for share in range(1, jobs):
        pid = os.fork()
        if pid == 0:  # a child writes its share and leaves without running any of pytest's exit code
            try:
                with contextlib.suppress(*FAILURES):
                    _write(config, rewritten[share::jobs], plain[share::jobs])
            finally:
                os._exit(0)
        children.append(pid)
    with contextlib.suppress(*FAILURES):  # a module left out is compiled by the workers, as without this
        _write(config, rewritten[::jobs], plain[::jobs])
    for pid in children:
        os.waitpid(pid, 0)
