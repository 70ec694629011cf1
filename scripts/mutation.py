"""Mutation testing of the decisions: every changed decision must be caught by the tests.

    uv run python scripts/mutation.py                  # run mutmut on policy/, then judge the survivors
    uv run python scripts/mutation.py --target writes  # the write paths: sweep, undo, restore, unsubscribe
    uv run python scripts/mutation.py --reuse          # judge the last run again, without running
    uv run python scripts/mutation.py --verbose        # also show the message-text survivors
    uv run python scripts/mutation.py --target writes --again --only 'NAME*'   # after new tests: those again

Two targets. `policy` (the default): mutmut, configured in pyproject.toml `[tool.mutmut]`, mutates
the modules of src/mcp_multi_gmail/policy/ and runs every `tests/test_policy*.py` file against each
mutant, in mutants/.
`writes`: the decision code of the write paths (pyproject.toml `[tool.mutmut-writes]`: the sweep,
the undo record and its restore, the token life cycle, the label routine, the unsubscribe and the
record of lists left) with the emulator tests that exercise them; mutmut runs in mutants-writes/,
with that table as its `[tool.mutmut]`. This script then sorts what survived (or had no test at
all):

- message text: the mutant changes nothing but the text of a message (a string literal that only
  ever ends up in the message of a MailError or of an exception). It may survive.
- listed equivalent: the mutant is listed in tests/policy_equivalent_mutants.toml, with the reason
  why it cannot change behaviour.
- decision: anything else. The script exits 1 while one is left, and also while an entry of the
  equivalents file matches no surviving decision mutant (a stale entry), so the list stays reviewed.
  Each target has its own file: tests/policy_equivalent_mutants.toml, tests/writes_equivalent_mutants.toml.

docs/en/development.md ("Mutation testing of the policy", "... of the write paths") says how to kill a survivor.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Target:
    """What one mutation run mutates, where mutmut works, and where its reviewed equivalents are."""

    name: str
    home: Path  # mutmut's working directory; it writes its mutants/ there
    equivalents: Path
    table: str  # pyproject.toml's table with this target's mutmut configuration

    @property
    def mutants(self) -> Path:
        return self.home / "mutants"

    @property
    def log(self) -> Path:
        return self.mutants / "mutation-run.log"

    def config(self) -> dict[str, Any]:
        tool = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]
        config: dict[str, Any] = tool[self.table]
        return config

    def sources(self) -> list[str]:
        """The mutated modules, relative to the project (mutmut's .meta files follow them): each file of
        `source_paths`, and each module of a package given as a directory."""
        found = []
        for entry in self.config()["source_paths"]:
            path = ROOT / entry
            found += sorted(str(p.relative_to(ROOT)) for p in path.glob("*.py")) if path.is_dir() else [entry]
        return found

    def prepare(self) -> None:
        """A target of its own gets a working directory: its configuration as the `[tool.mutmut]` of a
        pyproject.toml there, and the project's src/ and tests/ linked in (mutmut copies them)."""
        if self.home == ROOT:
            return
        shutil.rmtree(self.home, ignore_errors=True)
        self.home.mkdir()
        self.configure()
        for name in ("src", "tests"):
            (self.home / name).symlink_to(ROOT / name, target_is_directory=True)

    def configure(self) -> None:
        if self.home != ROOT:
            lines = ["[tool.mutmut]"] + [f"{key} = {json.dumps(value)}" for key, value in self.config().items()]
            (self.home / "pyproject.toml").write_text("\n".join(lines) + "\n", "utf-8")


TARGETS = {
    "policy": Target("policy", ROOT, ROOT / "tests" / "policy_equivalent_mutants.toml", "mutmut"),
    "writes": Target(
        "writes", ROOT / "mutants-writes", ROOT / "tests" / "writes_equivalent_mutants.toml", "mutmut-writes"
    ),
}

# Exceptions whose arguments are only message text. MailError's first argument is the error code,
# which a client branches on: only its later arguments are text.
MESSAGE_EXCEPTIONS = frozenset({"TypeError", "ValueError"})
# The error helpers of errors.py, whose only argument is the message.
MESSAGE_HELPERS = frozenset({"invalid_input", "not_found"})
# Keyword arguments that are text for the user wherever they are given: a result's reason, detail or
# note (a field no caller branches on), a log line's text.
TEXT_KEYWORDS = frozenset({"message", "reason", "detail", "note", "how_to_get_the_rest"})
# Calls whose arguments at these positions are only text: restore's tally of a skipped or failed message
# (its reason), records.after_error (the stderr line's words), and statefile's damaged and unwritable
# (what the file is called, why it is damaged, what the call did not do, the advice: words of the error).
# statefile's two also take the file's path or folder only to name it in the error's words; so does the
# unsubscribe's note of a request made but not recorded (_not_recorded: what was made, what a retry would
# do). These only format such an argument into text: None there reads "None" and raises nothing.
TEXT_POSITIONS = {"skip": {2}, "fail": {2}, "after_error": {1}}
TEXT_POSITIONS |= {"damaged": {0, 1, 2, 3, 4}, "unwritable": {0, 1, 3}, "_not_recorded": {1, 2}}
FORMATTING_HELPERS = frozenset({"damaged", "unwritable", "_not_recorded"})
# A log line (`logger.error(...)` and the like): its format and arguments are words on stderr.
LOGGERS = frozenset({"logger", "log"})
LOG_METHODS = frozenset({"debug", "info", "warning", "error", "exception"})
CAUGHT = frozenset({"killed", "timeout", "caught by type check"})
LEFT = frozenset({"survived", "no tests"})


@dataclass(frozen=True)
class Mutant:
    name: str  # mutmut's key, e.g. mcp_multi_gmail.policy.common.x_check_count__mutmut_1
    function: str  # the function it mutates, e.g. check_count
    status: str  # mutmut's word: killed, survived, no tests, timeout, ...
    diff: str  # as `mutmut show` prints it
    source: str = ""  # the file, e.g. src/mcp_multi_gmail/policy/common.py

    def lines(self, sign: str) -> list[str]:
        """The diff's added (`+`) or removed (`-`) lines, without the sign and the indentation."""
        return [line[1:].strip() for line in self.diff.splitlines()[2:] if line.startswith(sign)]


@dataclass(frozen=True)
class Equivalent:
    function: str
    plus: str  # the mutant's `+` line; "" for a mutant that only removes code
    minus: str  # the `-` line; needed only when `plus` is empty
    reason: str
    module: str = ""  # the file's name (sweep.py) where a target mutates several

    def matches(self, mutant: Mutant) -> bool:
        if mutant.function != self.function or (self.module and Path(mutant.source).name != self.module):
            return False
        if self.plus:
            return self.plus.strip() in mutant.lines("+")
        return not mutant.lines("+") and self.minus.strip() in mutant.lines("-")


# --- which string literals are message text --------------------------------------------------


def _differences(a: object, b: object) -> Iterator[tuple[object, object]]:
    """The smallest differing pairs of nodes (or values) between two ASTs of one function."""
    if type(a) is not type(b):
        yield a, b
    elif isinstance(a, ast.JoinedStr) and isinstance(b, ast.JoinedStr):
        yield from _fstring_differences(a, b)
    elif isinstance(a, ast.Constant) and isinstance(b, ast.Constant):
        if a.value != b.value or type(a.value) is not type(b.value):
            yield a, b
    elif isinstance(a, ast.AST) and isinstance(b, ast.AST):
        for field in a._fields:
            if field in {"ctx", "type_comment", "kind"}:
                continue
            yield from _differences(getattr(a, field, None), getattr(b, field, None))
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield a, b
        else:
            for x, y in zip(a, b, strict=True):
                yield from _differences(x, y)
    elif a != b:
        yield a, b


def _fstring_differences(a: ast.JoinedStr, b: ast.JoinedStr) -> Iterator[tuple[object, object]]:
    # Text added at an end of an f-string adds a part to it, so its parts are compared in two
    # layers: the {expressions} one by one, and the text around them as a whole (the f-strings).
    fields_a = [v for v in a.values if isinstance(v, ast.FormattedValue)]
    fields_b = [v for v in b.values if isinstance(v, ast.FormattedValue)]
    if len(fields_a) != len(fields_b):
        yield a.values, b.values
        return
    for x, y in zip(fields_a, fields_b, strict=True):
        yield from _differences(x, y)
    text_a = [v.value for v in a.values if isinstance(v, ast.Constant)]
    text_b = [v.value for v in b.values if isinstance(v, ast.Constant)]
    if text_a != text_b:
        yield a, b


def _callee(call: ast.Call) -> str:
    func = call.func
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else ""


class _Function:
    """One function's AST with parent links, to ask where a string literal ends up."""

    def __init__(self, tree: ast.AST, *, returns_text: bool = False) -> None:
        self.tree = tree
        self.returns_text = returns_text  # the function's result is text for the user (listed as such)
        self.parent: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node

    def is_text(self, node: ast.AST, seen: frozenset[str] = frozenset()) -> bool:
        """Whether the value of `node` only ever becomes part of a message.

        It does when it reaches the message argument of MailError (any argument after the code)
        or an argument of TypeError/ValueError, passing only through f-strings, `+`, the branches
        (not the test) of `x if c else y`, `sep.join(...)`, and local names that are used nowhere
        else. Anything else (an error code, a compared or searched string, a key, a call's argument,
        a return value) is a decision."""
        parent = self.parent.get(node)
        if isinstance(parent, ast.JoinedStr | ast.FormattedValue):
            return self.is_text(parent, seen)
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add):
            return self.is_text(parent, seen)
        if isinstance(parent, ast.IfExp) and node is not parent.test:
            return self.is_text(parent, seen)
        if isinstance(parent, ast.Attribute | ast.GeneratorExp | ast.ListComp):
            return self._joined_is_text(node, parent, seen)
        if isinstance(parent, ast.Call | ast.keyword):
            return self._argument_is_text(node, parent)
        if isinstance(parent, ast.Assign | ast.AnnAssign) and node is parent.value:
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return len(targets) == 1 and isinstance(targets[0], ast.Name) and self._name_is_text(targets[0].id, seen)
        if isinstance(parent, ast.Return):
            return self.returns_text
        return False

    def _joined_is_text(self, node: ast.AST, parent: ast.AST, seen: frozenset[str]) -> bool:
        # `sep.join(parts)`: the separator and each part end up where the joined string does.
        if isinstance(parent, ast.Attribute):
            call = self.parent.get(parent)
            joins = parent.attr == "join" and isinstance(call, ast.Call) and call.func is parent
        else:
            call = self.parent.get(parent)
            joins = node is getattr(parent, "elt", None) and isinstance(call, ast.Call) and _callee(call) == "join"
        return joins and call is not None and self.is_text(call, seen)

    def _argument_is_text(self, node: ast.AST, parent: ast.Call | ast.keyword) -> bool:
        if isinstance(parent, ast.keyword):
            call = self.parent.get(parent)
            if parent.arg == "message":  # a name many functions take; MailError's is its text
                return isinstance(call, ast.Call) and _callee(call) == "MailError"
            return parent.arg in TEXT_KEYWORDS
        if node not in parent.args:
            return False
        callee, position = _callee(parent), parent.args.index(node)
        func = parent.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in LOGGERS:
            return callee in LOG_METHODS
        if callee == "MailError":
            return position >= 1
        if callee in TEXT_POSITIONS:
            return position in TEXT_POSITIONS[callee]
        return callee in MESSAGE_EXCEPTIONS or callee in MESSAGE_HELPERS

    def text_difference(self, a: object, b: object) -> bool:
        """Whether replacing `a` (of the original) by `b` changes only message text: one string for
        another where the string is text, or None for a text that is only ever put into f-strings
        (where None reads "None" and raises nothing). A condition is never text, even one that
        picks between two texts: which words a user reads can be a decision."""
        if not isinstance(a, ast.AST):
            return False
        if _is_string(a) and _is_string(b):
            return self.is_text(a)
        none = isinstance(b, ast.Constant) and b.value is None
        return none and self.is_text(a) and (self._only_formatted(a) or self._logged(a) or self._formatted_by_helper(a))

    def _formatted_by_helper(self, node: ast.AST) -> bool:
        """An argument statefile's error helpers only ever format into their message."""
        call = self.parent.get(node)
        if not (isinstance(call, ast.Call) and node in call.args and _callee(call) in FORMATTING_HELPERS):
            return False
        return call.args.index(node) in TEXT_POSITIONS[_callee(call)]

    def _logged(self, node: ast.AST) -> bool:
        """An argument of a log line, which %-formats None as "None"."""
        call = self.parent.get(node)
        func = call.func if isinstance(call, ast.Call) else None
        return isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in LOGGERS

    def _only_formatted(self, node: ast.AST) -> bool:
        parent = self.parent.get(node)
        if not (
            isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)
        ):
            return False
        name = parent.targets[0].id
        uses = [
            n for n in ast.walk(self.tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        ]
        return bool(uses) and all(
            isinstance(self.parent.get(use), ast.FormattedValue) or self._formatted_by_helper(use) for use in uses
        )

    def _name_is_text(self, name: str, seen: frozenset[str]) -> bool:
        if name in seen:
            return True  # a cycle adds no use of its own
        uses = [
            n for n in ast.walk(self.tree) if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
        ]
        return bool(uses) and all(self.is_text(use, seen | {name}) for use in uses)


def _is_string(node: object) -> bool:
    """A string literal or an f-string (whose {expressions} were compared on their own)."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def only_message_text(original: str, mutated: str, *, returns_text: bool = False) -> bool:
    """Whether `mutated` (a function's source) differs from `original` only in message text.
    `returns_text`: what the function returns is text for the user, never compared by a caller."""
    before, after = ast.parse(original), ast.parse(mutated)
    pairs = list(_differences(before, after))
    if not pairs:
        return False  # the same AST: not a text change, so it is judged like any decision
    function = _Function(before, returns_text=returns_text)
    return all(function.text_difference(a, b) for a, b in pairs)


# --- running mutmut and reading its results --------------------------------------------------


def run_mutmut(
    target: Target,
    max_minutes: float | None = None,
    only: list[str] | None = None,
    *,
    again: bool = False,
    children: int | None = None,
) -> tuple[int, float, float]:
    """Run mutmut from scratch; returns its exit code, the wall time and the CPU time (seconds). With
    `max_minutes`, mutmut is stopped then (exit code -1): what it checked by then is kept, the rest is
    "not checked" (it runs the mutants with the fastest tests first). `again` (with `only`): run the
    named mutants once more in the last run's working directory, every other mutant keeping its result
    (mutmut starts a module's results afresh when its source changed since, and every result when the
    test selection changed)."""
    if again and target.mutants.is_dir():
        target.configure()  # the tests it selects may have changed since
    else:
        target.prepare()
        shutil.rmtree(target.mutants, ignore_errors=True)
        target.mutants.mkdir()
    mutmut = Path(sys.executable).with_name("mutmut")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with target.log.open("wb") as log:
        # A session of its own, so that stopping it stops its workers too (and nothing else).
        process = subprocess.Popen(
            [str(mutmut), "run", *(["--max-children", str(children)] if children else []), *(only or [])],
            cwd=target.home,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=None if max_minutes is None else max_minutes * 60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            code = -1
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, wall, cpu


def read_mutants(target: Target) -> list[Mutant]:
    # mutmut's own readers, so the diffs are exactly what `mutmut show` prints (it is pinned in uv.lock).
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key

    mutants = []
    for source in target.sources():
        meta_file = target.mutants / (source + ".meta")
        if not meta_file.exists():
            continue  # a module with nothing to mutate (a package's face)
        meta = json.loads(meta_file.read_text("utf-8"))
        for name, code in meta["exit_code_by_key"].items():
            function, cls = orig_function_and_class_names_from_key(name)
            status = status_by_exit_code[code]
            diff = get_diff_for_mutant(name, path=source) if status not in CAUGHT else ""
            mutants.append(Mutant(name, f"{cls}.{function}" if cls else function, status, diff, source))
    return mutants


def function_sources(name: str, source: str) -> tuple[str, str]:
    """The original and the mutated source of the function a mutant changes."""
    import libcst as cst
    from mutmut.mutation.diff_apply import (
        read_functions_from_index,
        read_mutant_function,
        read_mutants_module,
        read_original_function,
    )

    functions = read_functions_from_index(name, source)
    if functions is None:
        module = read_mutants_module(source)
        functions = (read_original_function(module, name), read_mutant_function(module, name))
    # A method's source is indented under its class.
    original, mutated = (textwrap.dedent(cst.Module([f]).code) for f in functions)
    return original, mutated


def load_equivalents(path: Path) -> list[Equivalent]:
    data = tomllib.loads(path.read_text("utf-8")) if path.exists() else {}
    entries = []
    for i, entry in enumerate(data.get("mutant", []), start=1):
        missing = {"function", "reason"} - entry.keys()
        if missing or not (entry.get("plus") or entry.get("minus")):
            raise SystemExit(f"{path.name}: entry {i} needs function, plus (or minus) and reason")
        entries.append(
            Equivalent(
                entry["function"],
                entry.get("plus", ""),
                entry.get("minus", ""),
                entry["reason"],
                entry.get("module", ""),
            )
        )
    return entries


def test_files(target: Target) -> list[str]:
    if target.name == "policy":
        return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_policy*.py"))
    return [arg for arg in target.config().get("pytest_add_cli_args_test_selection", []) if arg.startswith("tests")]


@dataclass
class Verdict:
    mutants: list[Mutant]
    text: list[Mutant] = field(default_factory=list)  # alive, but only a message's text changed
    listed: list[Mutant] = field(default_factory=list)  # alive, listed as equivalent
    decisions: list[Mutant] = field(default_factory=list)  # alive, and a decision changed: a failure
    stale: list[Equivalent] = field(default_factory=list)  # entries no surviving decision mutant matches
    undecided: list[Mutant] = field(default_factory=list)  # mutmut could not tell (suspicious, skipped, ...)
    unchecked: list[Mutant] = field(default_factory=list)  # not run: mutmut was stopped at --max-minutes

    @property
    def failed(self) -> bool:
        return bool(self.decisions or self.stale or self.undecided or self.unchecked)

    def split(self, status: str) -> str:
        kinds = (("message text", self.text), ("listed equivalent", self.listed), ("decision", self.decisions))
        return ", ".join(f"{sum(m.status == status for m in group)} {kind}" for kind, group in kinds)


def load_text_functions(path: Path) -> set[tuple[str, str]]:
    """(file name, function) of the functions listed as returning only text for the user (`[[text]]`)."""
    data = tomllib.loads(path.read_text("utf-8")) if path.exists() else {}
    found = set()
    for i, entry in enumerate(data.get("text", []), start=1):
        if not {"module", "function", "reason"} <= entry.keys():
            raise SystemExit(f"{path.name}: text entry {i} needs module, function and reason")
        found.add((entry["module"], entry["function"]))
    return found


def judge(
    mutants: list[Mutant], equivalents: list[Equivalent], text_functions: frozenset[tuple[str, str]] = frozenset()
) -> Verdict:
    verdict = Verdict(mutants)
    used: set[int] = set()
    for mutant in mutants:
        returns_text = (Path(mutant.source).name, mutant.function) in text_functions
        if mutant.status in CAUGHT:
            continue
        if mutant.status == "not checked":
            verdict.unchecked.append(mutant)
        elif mutant.status not in LEFT:
            verdict.undecided.append(mutant)
        elif only_message_text(*function_sources(mutant.name, mutant.source), returns_text=returns_text):
            verdict.text.append(mutant)
        elif matching := [i for i, entry in enumerate(equivalents) if entry.matches(mutant)]:
            used.update(matching)
            verdict.listed.append(mutant)
        else:
            verdict.decisions.append(mutant)
    # An entry can only be called stale when every mutant was run.
    verdict.stale = [] if verdict.unchecked else [entry for i, entry in enumerate(equivalents) if i not in used]
    return verdict


def report(verdict: Verdict, equivalents: Path, *, verbose: bool) -> None:
    if verbose:
        for mutant in verdict.text:
            print(f"\n# message text, {mutant.status}: {mutant.name}\n{mutant.diff}")
    for mutant in verdict.decisions:
        print(f"\n# DECISION, {mutant.status}: {mutant.name}\n{mutant.diff}")
    for mutant in verdict.undecided:
        print(f"\n# NOT DECIDED ({mutant.status}): {mutant.name}\n{mutant.diff}")
    for entry in verdict.stale:
        shown = f"+ {entry.plus}" if entry.plus else f"- {entry.minus}"
        print(f"\n# STALE entry in {equivalents.name}, no surviving mutant matches it: {entry.function}: {shown}")
    counts = Counter(m.status for m in verdict.mutants)
    print(
        f"\n{len(verdict.mutants)} mutants: {counts['killed']} killed, {counts['timeout']} timed out, "
        f"{counts['survived']} survived ({verdict.split('survived')}), "
        f"{counts['no tests']} no tests ({verdict.split('no tests')})"
        + (f", {len(verdict.unchecked)} not checked (stopped at --max-minutes)" if verdict.unchecked else "")
    )
    for source in sorted({m.source for m in verdict.mutants}):
        mine = [m for m in verdict.mutants if m.source == source]
        left = Counter(m.status for m in mine)
        print(
            f"  {source}: {len(mine)} mutants, {left['killed']} killed, {left['timeout']} timed out, "
            f"{left['survived']} survived, {left['no tests']} no tests, {left['not checked']} not checked"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="judge the last run in mutants/ without running mutmut")
    parser.add_argument("--verbose", action="store_true", help="also print the message-text survivors")
    parser.add_argument("--target", choices=sorted(TARGETS), default="policy", help="what to mutate (policy)")
    parser.add_argument("--max-minutes", type=float, help="stop mutmut after this long and judge what it checked")
    parser.add_argument(
        "--only",
        action="append",
        metavar="GLOB",
        help="run only the mutants whose names match (mutmut's names, e.g. "
        "'mcp_multi_gmail.mail.undo.tokens.x__alive*'); the others stay not checked",
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="with --only: keep the last run's results and run only the named mutants again (after new tests)",
    )
    parser.add_argument(
        "--children",
        type=int,
        help="mutants tested at once (mutmut's default: one per core); the emulator tests mostly wait, "
        "so 8 on 2 cores runs the write paths about four times faster",
    )
    args = parser.parse_args()
    if args.again and not args.only:
        parser.error("--again needs --only: the mutants to run again")
    target = TARGETS[args.target]

    print(f"mutation testing of {', '.join(target.sources())} with {', '.join(test_files(target))}", flush=True)
    if not args.reuse:
        code, wall, cpu = run_mutmut(target, args.max_minutes, args.only, again=args.again, children=args.children)
        if code not in (0, -1):
            tail = target.log.read_text("utf-8", errors="replace")[-4000:]
            print(tail.replace("\r", "\n"), file=sys.stderr)
            print(f"mutmut run failed (exit {code}); its whole output is in {target.log}", file=sys.stderr)
            return 2
    os.chdir(target.home)  # mutmut's readers take paths relative to its working directory
    texts = frozenset(load_text_functions(target.equivalents))
    mutants = read_mutants(target)
    if not mutants:  # nothing read is never a pass: mutmut's results are not where its sources say
        print(f"no mutants found in {target.mutants} for {', '.join(target.sources())}", file=sys.stderr)
        return 2
    verdict = judge(mutants, load_equivalents(target.equivalents), texts)
    report(verdict, target.equivalents, verbose=args.verbose)
    if not args.reuse:
        print(f"time: {wall:.0f} s wall, {cpu:.0f} s CPU (mutmut and its test processes)")
    if verdict.failed:
        print(
            "FAILED: kill each DECISION mutant with a test that asserts what it changes, or list it in "
            f"tests/{target.equivalents.name} with the reason it cannot change behaviour; remove STALE entries "
            "(docs/en/development.md, 'Mutation testing of the policy' and '... of the write paths')."
        )
        return 1
    print("OK: every mutant that changes a decision is killed or listed as equivalent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
