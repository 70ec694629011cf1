"""Mutation testing of the permission module: every changed decision must be caught by its own tests.

    uv run python scripts/mutation.py            # run mutmut on policy/, then judge the survivors
    uv run python scripts/mutation.py --reuse    # judge the last run in mutants/ again, without running
    uv run python scripts/mutation.py --verbose  # also show the message-text survivors

mutmut (configured in pyproject.toml, `[tool.mutmut]`) mutates the modules of src/mcp_multi_gmail/policy/
and runs every `tests/test_policy*.py` file against each mutant. This script then sorts what survived
(or had no test at all):

- message text: the mutant changes nothing but the text of a message (a string literal that only
  ever ends up in the message of a MailError or of an exception). It may survive.
- listed equivalent: the mutant is listed in tests/policy_equivalent_mutants.toml, with the reason
  why it cannot change behaviour.
- decision: anything else. The script exits 1 while one is left, and also while an entry of the
  equivalents file matches no surviving decision mutant (a stale entry), so the list stays reviewed.

docs/en/development.md ("Mutation testing of the policy") says how to kill a survivor.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import shutil
import subprocess
import sys
import textwrap
import time
import tomllib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCE = "src/mcp_multi_gmail/policy"
EQUIVALENTS = ROOT / "tests" / "policy_equivalent_mutants.toml"
MUTANTS = ROOT / "mutants"
LOG = MUTANTS / "mutation-run.log"

# Exceptions whose arguments are only message text. MailError's first argument is the error code,
# which a client branches on: only its later arguments are text.
MESSAGE_EXCEPTIONS = frozenset({"TypeError", "ValueError"})
CAUGHT = frozenset({"killed", "timeout", "caught by type check"})
LEFT = frozenset({"survived", "no tests"})


@dataclass(frozen=True)
class Mutant:
    name: str  # mutmut's key, e.g. mcp_multi_gmail.policy.common.x_check_count__mutmut_1
    function: str  # the function it mutates, e.g. check_count
    status: str  # mutmut's word: killed, survived, no tests, timeout, ...
    diff: str  # as `mutmut show` prints it
    path: str = ""  # the mutated module, e.g. src/mcp_multi_gmail/policy/common.py

    def lines(self, sign: str) -> list[str]:
        """The diff's added (`+`) or removed (`-`) lines, without the sign and the indentation."""
        return [line[1:].strip() for line in self.diff.splitlines()[2:] if line.startswith(sign)]


@dataclass(frozen=True)
class Equivalent:
    function: str
    plus: str  # the mutant's `+` line; "" for a mutant that only removes code
    minus: str  # the `-` line; needed only when `plus` is empty
    reason: str

    def matches(self, mutant: Mutant) -> bool:
        if mutant.function != self.function:
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

    def __init__(self, tree: ast.AST) -> None:
        self.tree = tree
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
            return isinstance(call, ast.Call) and _callee(call) == "MailError" and parent.arg == "message"
        if node not in parent.args:
            return False
        if _callee(parent) == "MailError":
            return parent.args.index(node) >= 1
        return _callee(parent) in MESSAGE_EXCEPTIONS

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


def only_message_text(original: str, mutated: str) -> bool:
    """Whether `mutated` (a function's source) differs from `original` only in message text."""
    before, after = ast.parse(original), ast.parse(mutated)
    pairs = list(_differences(before, after))
    if not pairs:
        return False  # the same AST: not a text change, so it is judged like any decision
    function = _Function(before)
    return all(_is_string(a) and _is_string(b) and isinstance(a, ast.AST) and function.is_text(a) for a, b in pairs)


# --- running mutmut and reading its results --------------------------------------------------


def run_mutmut() -> tuple[int, float, float]:
    """Run mutmut from scratch; returns its exit code, the wall time and the CPU time (seconds)."""
    shutil.rmtree(MUTANTS, ignore_errors=True)
    MUTANTS.mkdir()
    mutmut = Path(sys.executable).with_name("mutmut")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with LOG.open("wb") as log:
        code = subprocess.run(
            [str(mutmut), "run"], cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, check=False
        ).returncode
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return code, wall, cpu


def read_mutants() -> list[Mutant]:
    # mutmut's own readers, so the diffs are exactly what `mutmut show` prints (it is pinned in uv.lock).
    from mutmut.mutation.diff_apply import get_diff_for_mutant
    from mutmut.stats import status_by_exit_code
    from mutmut.utils.format_utils import orig_function_and_class_names_from_key

    mutants = []
    for path in sources():
        meta_file = MUTANTS / (path + ".meta")
        if not meta_file.exists():
            continue  # a module with nothing to mutate (the face)
        meta = json.loads(meta_file.read_text("utf-8"))
        for name, code in meta["exit_code_by_key"].items():
            function, cls = orig_function_and_class_names_from_key(name)
            status = status_by_exit_code[code]
            diff = get_diff_for_mutant(name, path=path) if status not in CAUGHT else ""
            mutants.append(Mutant(name, f"{cls}.{function}" if cls else function, status, diff, path))
    return mutants


def sources() -> list[str]:
    """The policy's modules, as paths relative to the project (mutmut's .meta files follow them)."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / SOURCE).glob("*.py"))


def function_sources(name: str, path: str) -> tuple[str, str]:
    """The original and the mutated source of the function a mutant changes."""
    import libcst as cst
    from mutmut.mutation.diff_apply import (
        read_functions_from_index,
        read_mutant_function,
        read_mutants_module,
        read_original_function,
    )

    functions = read_functions_from_index(name, path)
    if functions is None:
        module = read_mutants_module(path)
        functions = (read_original_function(module, name), read_mutant_function(module, name))
    # A method's source is indented under its class.
    original, mutated = (textwrap.dedent(cst.Module([f]).code) for f in functions)
    return original, mutated


def load_equivalents() -> list[Equivalent]:
    data = tomllib.loads(EQUIVALENTS.read_text("utf-8")) if EQUIVALENTS.exists() else {}
    entries = []
    for i, entry in enumerate(data.get("mutant", []), start=1):
        missing = {"function", "reason"} - entry.keys()
        if missing or not (entry.get("plus") or entry.get("minus")):
            raise SystemExit(f"{EQUIVALENTS.name}: entry {i} needs function, plus (or minus) and reason")
        entries.append(Equivalent(entry["function"], entry.get("plus", ""), entry.get("minus", ""), entry["reason"]))
    return entries


def test_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_policy*.py"))


@dataclass
class Verdict:
    mutants: list[Mutant]
    text: list[Mutant] = field(default_factory=list)  # alive, but only a message's text changed
    listed: list[Mutant] = field(default_factory=list)  # alive, listed as equivalent
    decisions: list[Mutant] = field(default_factory=list)  # alive, and a decision changed: a failure
    stale: list[Equivalent] = field(default_factory=list)  # entries no surviving decision mutant matches
    undecided: list[Mutant] = field(default_factory=list)  # mutmut could not tell (suspicious, skipped, ...)

    @property
    def failed(self) -> bool:
        return bool(self.decisions or self.stale or self.undecided)

    def split(self, status: str) -> str:
        kinds = (("message text", self.text), ("listed equivalent", self.listed), ("decision", self.decisions))
        return ", ".join(f"{sum(m.status == status for m in group)} {kind}" for kind, group in kinds)


def judge(mutants: list[Mutant], equivalents: list[Equivalent]) -> Verdict:
    verdict = Verdict(mutants)
    used: set[int] = set()
    for mutant in mutants:
        if mutant.status in CAUGHT:
            continue
        if mutant.status not in LEFT:
            verdict.undecided.append(mutant)
        elif only_message_text(*function_sources(mutant.name, mutant.path)):
            verdict.text.append(mutant)
        elif matching := [i for i, entry in enumerate(equivalents) if entry.matches(mutant)]:
            used.update(matching)
            verdict.listed.append(mutant)
        else:
            verdict.decisions.append(mutant)
    verdict.stale = [entry for i, entry in enumerate(equivalents) if i not in used]
    return verdict


def report(verdict: Verdict, *, verbose: bool) -> None:
    if verbose:
        for mutant in verdict.text:
            print(f"\n# message text, {mutant.status}: {mutant.name}\n{mutant.diff}")
    for mutant in verdict.decisions:
        print(f"\n# DECISION, {mutant.status}: {mutant.name}\n{mutant.diff}")
    for mutant in verdict.undecided:
        print(f"\n# NOT DECIDED ({mutant.status}): {mutant.name}\n{mutant.diff}")
    for entry in verdict.stale:
        shown = f"+ {entry.plus}" if entry.plus else f"- {entry.minus}"
        print(f"\n# STALE entry in {EQUIVALENTS.name}, no surviving mutant matches it: {entry.function}: {shown}")
    counts = Counter(m.status for m in verdict.mutants)
    print(
        f"\n{len(verdict.mutants)} mutants: {counts['killed']} killed, {counts['timeout']} timed out, "
        f"{counts['survived']} survived ({verdict.split('survived')}), "
        f"{counts['no tests']} no tests ({verdict.split('no tests')})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--reuse", action="store_true", help="judge the last run in mutants/ without running mutmut")
    parser.add_argument("--verbose", action="store_true", help="also print the message-text survivors")
    args = parser.parse_args()
    os.chdir(ROOT)  # mutmut's readers take paths relative to the project

    print(f"mutation testing of {SOURCE} with {', '.join(test_files())}", flush=True)
    if not args.reuse:
        code, wall, cpu = run_mutmut()
        if code != 0:
            tail = LOG.read_text("utf-8", errors="replace")[-4000:]
            print(tail.replace("\r", "\n"), file=sys.stderr)
            print(f"mutmut run failed (exit {code}); its whole output is in {LOG.relative_to(ROOT)}", file=sys.stderr)
            return 2
    verdict = judge(read_mutants(), load_equivalents())
    report(verdict, verbose=args.verbose)
    if not args.reuse:
        print(f"time: {wall:.0f} s wall, {cpu:.0f} s CPU (mutmut and its test processes)")
    if verdict.failed:
        print(
            "FAILED: kill each DECISION mutant with a test in tests/test_policy*.py that asserts what it "
            f"changes, or list it in tests/{EQUIVALENTS.name} with the reason it cannot change behaviour; "
            "remove STALE entries (docs/en/development.md, 'Mutation testing of the policy')."
        )
        return 1
    print("OK: every mutant that changes a decision is killed or listed as equivalent")
    return 0


if __name__ == "__main__":
    sys.exit(main())
