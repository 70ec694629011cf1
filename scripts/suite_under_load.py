"""Run the test suite several times in a row while CPU-bound processes compete for the cores.

    uv run python scripts/suite_under_load.py                     # 10 runs, 2 burners, the whole suite
    uv run python scripts/suite_under_load.py --runs 3 --burners 1
    uv run python scripts/suite_under_load.py --fresh             # each run in a new clone of HEAD
    uv run python scripts/suite_under_load.py --runs 1 -- tests/test_watch_idle.py -k reconnect

A test that passes on a quiet machine and fails while the cores are busy depends on a timing
window; this finds it. Each burner is `python3 -c 'while True: pass'`. Everything after `--` goes
to pytest as it is (a selection, `-n 2`, ...); without it pytest runs the whole suite with the
project's own options. `--fresh` clones the checkout's HEAD into a new temporary folder for every run
and runs `uv run pytest` there, as a new user would (the first run of a clone compiles and installs).

It prints one line per run (the counts from pytest's JUnit XML report, the exit code, the wall
time), then every test that failed or errored in any run, with how many runs and the first line of
its message; `--json PATH` also writes all of it as JSON. Exit code 0 only when every run passed.
docs/en/development.md ("The suite under load") says when to use it.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BURNER = "while True: pass"


@dataclass
class Run:
    number: int
    exit_code: int
    seconds: float
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    # test id -> the first line of its failure or error
    problems: dict[str, str] = field(default_factory=dict)
    note: str = ""  # why there are no counts (pytest ended without its report)

    def line(self, runs: int) -> str:
        counts = f"{self.passed} passed, {self.failed} failed, {self.errors} errors, {self.skipped} skipped"
        verdict = "ok" if self.ok else "FAILED"
        extra = f" ({self.note})" if self.note else ""
        return f"run {self.number}/{runs}: {verdict}: {counts} in {self.seconds:.1f} s, exit {self.exit_code}{extra}"

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and self.failed == 0 and self.errors == 0


def test_id(case: ET.Element) -> str:
    """pytest's node id back from a JUnit test case (`tests.server.test_x` + `name` -> path::name)."""
    classname, name = case.get("classname", ""), case.get("name", "")
    parts = classname.split(".")
    # The module is the longest prefix that is a file under the checkout; the rest are classes.
    for cut in range(len(parts), 0, -1):
        path = Path(*parts[:cut]).with_suffix(".py")
        if (ROOT / path).is_file():
            return "::".join([path.as_posix(), *parts[cut:], name])
    return f"{classname}::{name}" if classname else name


def read_report(path: Path, run: Run) -> None:
    """Counts and problems from pytest's `--junitxml` report into `run`."""
    if not path.is_file():
        run.note = "no report: pytest ended before writing it"
        return
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as error:
        run.note = f"unreadable report: {error}"
        return
    for case in root.iter("testcase"):
        outcome = next((child for child in case if child.tag in ("failure", "error", "skipped")), None)
        if outcome is None:
            run.passed += 1
        elif outcome.tag == "skipped":
            run.skipped += 1
        else:
            if outcome.tag == "failure":
                run.failed += 1
            else:
                run.errors += 1
            message = (outcome.get("message") or outcome.text or outcome.tag).strip().splitlines()
            run.problems[test_id(case)] = f"{outcome.tag}: {message[0][:200] if message else ''}"


def start_burners(count: int) -> list[subprocess.Popen[bytes]]:
    python = shutil.which("python3") or sys.executable
    return [subprocess.Popen([python, "-c", BURNER]) for _ in range(count)]


def stop_burners(burners: list[subprocess.Popen[bytes]]) -> None:
    for burner in burners:
        burner.kill()
    for burner in burners:
        burner.wait()


def fresh_clone(into: Path) -> Path:
    """A clone of the checkout's HEAD (committed files only, as a new user gets them)."""
    target = into / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(target)], check=True)
    return target


def one_run(number: int, pytest_args: list[str], fresh: bool, log_dir: Path) -> Run:
    with tempfile.TemporaryDirectory(prefix="mg-under-load-") as scratch:
        where = fresh_clone(Path(scratch)) if fresh else ROOT
        report = Path(scratch) / "report.xml"
        log = log_dir / f"run-{number}.log"
        command = ["uv", "run", "pytest", "-q", f"--junitxml={report}", *pytest_args]
        started = time.monotonic()
        with log.open("w", encoding="utf-8") as out:
            done = subprocess.run(command, cwd=where, stdout=out, stderr=subprocess.STDOUT, check=False)
        run = Run(number, done.returncode, time.monotonic() - started)
        read_report(report, run)
    if done.returncode not in (0, 1) and not run.note:
        run.note = f"pytest's exit code {done.returncode}; its output: {log}"
    return run


def summary(runs: list[Run]) -> list[str]:
    """Every test that failed or errored, most often first."""
    seen: dict[str, list[tuple[int, str]]] = {}
    for run in runs:
        for test, message in run.problems.items():
            seen.setdefault(test, []).append((run.number, message))
    lines = []
    for test, where in sorted(seen.items(), key=lambda item: (-len(item[1]), item[0])):
        numbers = ", ".join(str(n) for n, _ in where)
        lines.append(f"{test}: {len(where)} of {len(runs)} runs (run {numbers}): {where[0][1]}")
    return lines


def parse_args(argv: list[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    args = list(sys.argv[1:] if argv is None else argv)
    pytest_args: list[str] = []
    if "--" in args:
        cut = args.index("--")
        args, pytest_args = args[:cut], args[cut + 1 :]
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="how many runs in a row (10)")
    parser.add_argument("--burners", type=int, default=2, help="CPU-bound processes beside the suite (2)")
    parser.add_argument("--fresh", action="store_true", help="each run in a new clone of HEAD")
    parser.add_argument("--json", type=Path, help="also write every run and problem here")
    parser.add_argument("--logs", type=Path, help="folder for each run's pytest output (default: a temporary one)")
    options = parser.parse_args(args)
    if options.runs < 1 or options.burners < 0:
        parser.error("--runs must be at least 1 and --burners at least 0")
    return options, pytest_args


def main(argv: list[str] | None = None) -> int:
    options, pytest_args = parse_args(argv)
    log_dir = options.logs or Path(tempfile.mkdtemp(prefix="mg-under-load-logs-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"{options.runs} runs, {options.burners} burners, pytest {' '.join(pytest_args) or '(the suite)'}")
    print(f"each run's output: {log_dir}", flush=True)
    runs: list[Run] = []
    burners = start_burners(options.burners)
    try:
        for number in range(1, options.runs + 1):
            run = one_run(number, pytest_args, options.fresh, log_dir)
            runs.append(run)
            print(run.line(options.runs), flush=True)
    finally:
        stop_burners(burners)
    problems = summary(runs)
    good = sum(1 for run in runs if run.ok)
    times = sorted(run.seconds for run in runs)
    median = times[len(times) // 2]
    print(f"\n{good} of {len(runs)} runs passed; time {times[0]:.1f}-{times[-1]:.1f} s, median {median:.1f} s")
    print("failures and errors by test:" if problems else "no test failed or errored")
    for line in problems:
        print(f"  {line}")
    if options.json is not None:
        body: dict[str, Any] = {
            "options": {**vars(options), "json": str(options.json), "logs": str(log_dir)},
            "pytest": pytest_args,
            "runs": [asdict(run) for run in runs],
            "by_test": problems,
        }
        options.json.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0 if good == len(runs) else 1


if __name__ == "__main__":
    raise SystemExit(main())
