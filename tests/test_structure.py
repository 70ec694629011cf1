"""The code's rooms stay small and the architecture page names them (issue 26, docs/architecture.md).

No module of the server, the emulator, the benchmarks, the tests or the scripts is over 600 lines;
the `gmail/imap/` face and the faces of mail/ stay short (those of mail/ only hand names on); no
benchmark function is over 80 lines; docs/architecture.md names every module of the server's
packages and of the emulator, and every module path it names exists.
The self-contained installer, `scripts/build_release.py`, is left out on purpose: it is copied
beside the release archive and must stay one file.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "src" / "mcp_multi_gmail"
EMULATOR = ROOT / "packages" / "gmail-emulator" / "src" / "gmail_emulator"
ROOMS = [ROOT / "src", ROOT / "packages", ROOT / "benchmarks", ROOT / "tests", ROOT / "scripts"]
# Copied beside the release archive and run on its own, so it stays one file (docs/en/development.md).
SELF_CONTAINED_INSTALLER = ROOT / "scripts" / "build_release.py"
MOST_LINES = 600
MOST_FACE_LINES = 40
MOST_BENCHMARK_FUNCTION_LINES = 80


def _modules(*roots: Path) -> list[Path]:
    """The project's own modules: hidden folders (`.venv`, the benchmark's `.peer-venv`) and the
    tests' `node_modules` hold installed packages."""
    return sorted(
        path
        for root in roots
        for path in root.rglob("*.py")
        if not any(part.startswith(".") or part == "node_modules" for part in path.relative_to(ROOT).parts)
    )


def _line_count(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_no_module_is_over_600_lines() -> None:
    modules = [path for path in _modules(*ROOMS) if path != SELF_CONTAINED_INSTALLER]
    assert SELF_CONTAINED_INSTALLER.is_file()  # the one exception still exists
    too_long = {str(path.relative_to(ROOT)): _line_count(path) for path in modules}
    assert {name: lines for name, lines in too_long.items() if lines > MOST_LINES} == {}


def test_the_imap_face_is_short() -> None:
    assert _line_count(SERVER / "gmail" / "imap" / "__init__.py") <= MOST_FACE_LINES


def _mail_packages() -> list[Path]:
    return sorted(folder for folder in (SERVER / "mail").iterdir() if (folder / "__init__.py").is_file())


@pytest.mark.parametrize("package", _mail_packages(), ids=lambda folder: folder.name)
def test_a_mail_face_only_hands_names_on(package: Path) -> None:
    """A face of mail/ is short and holds nothing but its docstring, imports from its own package and `__all__`."""
    face = package / "__init__.py"
    assert _line_count(face) <= MOST_FACE_LINES
    for node in ast.parse(face.read_text(encoding="utf-8")).body:
        docstring = isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        own_import = isinstance(node, ast.ImportFrom) and node.level == 1
        names = isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]
        assert docstring or own_import or names, ast.unparse(node)


def test_no_benchmark_function_is_over_80_lines() -> None:
    too_long: dict[str, int] = {}
    for path in _modules(ROOT / "benchmarks"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > MOST_BENCHMARK_FUNCTION_LINES:
                    too_long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert too_long == {}


def _named_in_architecture() -> set[str]:
    """Every word the page writes as code (`…`), a module path also without its `.py` and slashes."""
    text = re.sub(r"```.*?```", "", (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8"), flags=re.S)
    named: set[str] = set()
    for code in re.findall(r"`([^`]+)`", text):
        for word in re.split(r"[\s,()|]+", code):
            named.add(word.strip("/").removesuffix(".py"))
    return named


def _package_modules() -> list[str]:
    """The server's top-level modules and packages, the modules of its packages (config/ and
    gmail/parse/ excepted: the page names those by subject), of gmail/imap/, server/tools/ and
    the packages of mail/, and every module of the emulator."""
    folders = [folder for folder in SERVER.iterdir() if (folder / "__init__.py").is_file() and folder.name != "config"]
    folders += [SERVER / "gmail" / "imap", SERVER / "server" / "tools", *_mail_packages()]
    paths = [
        *SERVER.glob("*.py"),
        *(path for folder in folders for path in folder.glob("*.py")),
        *EMULATOR.glob("*.py"),
    ]
    names = {path.stem if path.stem != "__init__" else path.parent.name for path in paths}
    return sorted(names - {"__init__", SERVER.name, EMULATOR.name})


@pytest.mark.parametrize("name", _package_modules())
def test_the_architecture_page_names_every_module(name: str) -> None:
    named = _named_in_architecture()
    assert name in named | {word.rsplit("/", 1)[-1] for word in named}


def test_every_module_path_the_architecture_page_names_exists() -> None:
    """A path (`gmail/imap/login.py`, `tools/common`, `tools/common.Registrar`) exists under the
    folder its first part names; words like `notifications/progress` name no folder and pass."""
    places = [ROOT, ROOT / "packages", SERVER.parent, SERVER, SERVER / "server", EMULATOR.parent]
    missing = []
    for path in sorted(word for word in _named_in_architecture() if "/" in word):
        first = path.split("/", 1)[0]
        bases = [place for place in places if first and (place / first).is_dir()]
        folder, _, last = path.rpartition("/")
        module = f"{folder}/{last.split('.', 1)[0]}"  # `tools/common.Registrar` names tools/common.py
        names = (path, f"{path}.py", module, f"{module}.py")
        if bases and not any((base / name).exists() for base in bases for name in names):
            missing.append(path)
    assert missing == []
