"""Build Miládka's add-on folder of mcp-multi-gmail (the release build).

    uv run python scripts/build_release.py --vault <vault> [--kind .doplnky|.addons] [--from ARCHIVE]
    uv run python scripts/build_release.py --out <add-on folder> [--from ARCHIVE]
    uv run python scripts/build_release.py --archive [--dist DIR]

The add-on folder (`<vault>/.doplnky/mcp-multi-gmail/` by default) gets the server package
`src/mcp_multi_gmail/` (never the emulator, tests or benchmarks), a `pyproject.toml` rewritten
for the add-on (the runtime dependencies, the console script, no dev group), its `uv.lock`,
the assistant guides `docs/pro-asistenta*.md`, `README.md` with the Czech pages it links to in
`docs/`, `LICENSE`, `NOTICE`, `CHANGELOG.md`, the generated marker
module `src/mcp_multi_gmail/_release.py` (it switches the location guard on) and `SHA256SUMS`
(`sha256sum -c SHA256SUMS` in the add-on folder verifies it).

The add-on folder may already hold an earlier build: a 2.x build (its `pyproject.toml`) or the
Node.js server 1.5.0 (`mcp-multi-gmail.mjs` with its `SHA256SUMS`). The program is replaced; the
watcher's and the send journal's files are kept; a file that belongs to neither makes the script
refuse before anything is changed, naming it.

`--archive` writes the same build as `dist/mcp-multi-gmail-<version>.tar.gz` and its line in
`dist/SHA256SUMS`; `--from ARCHIVE` installs from such an archive once it matches the
`SHA256SUMS` beside it.

Miládka then starts it from the vault root:
`uv run --no-dev --project .doplnky/mcp-multi-gmail mcp-multi-gmail --config system/multigmail.json`.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "mcp_multi_gmail"
ADDON_NAME = "mcp-multi-gmail"
KINDS = (".doplnky", ".addons")
# Files copied as they are (relative to the repository root).
FILES = (
    "README.md",
    "LICENSE",
    "NOTICE",
    "CHANGELOG.md",
    "docs/pro-asistenta.md",
    "docs/pro-asistenta-nastaveni.md",
    "docs/pro-asistenta-potize.md",
    "docs/pro-asistenta-hromadne.md",
    "docs/pro-asistenta-vraceni.md",
    "docs/pro-asistenta-rozesilky.md",
    "docs/pro-asistenta-preposlani.md",
    "docs/pro-asistenta-pozvanky.md",
    "docs/pro-asistenta-pripominky.md",
    # The pages README.md hands its reference sections on to (README.en.md's stay in the clone).
    "docs/konfigurace.md",
    "docs/nastroje.md",
    "docs/bezpecnost.md",
    "docs/hlidac.md",
    "docs/prechod-z-1.5.0.md",
    "docs/potize.md",
    "docs/vyvoj.md",
)
# Everything the build writes at the top of the add-on folder; a rebuild replaces exactly these
# and keeps the rest (the add-on's .venv, the watcher's wait.owner / wait-known.json).
MANAGED = ("src", "docs", "pyproject.toml", "uv.lock", "SHA256SUMS", "README.md", "LICENSE", "NOTICE", "CHANGELOG.md")
# What an add-on folder holds besides the program, kept by every upgrade: the watcher's claim and
# state (also 1.5.0's, in the same format), their half-written temporary copy, the send journal and
# its lock; and uv's environment, which uv re-syncs to the new lock by itself.
KEPT_FILES = ("wait.owner", "wait-known.json", "wait-known.json.tmp", "send-journal.json", ".send-journal.lock")
KEPT_DIRS = (".venv",)
# The send journal's temporary copy is `.send-journal.json.<pid>.tmp` (mail/sending/journal.py).
KEPT_PREFIX, KEPT_SUFFIX = ".send-journal.json.", ".tmp"
INSTALLER = "build_release.py"  # published beside the archive; --from needs nothing else
NODE_PROGRAM = "mcp-multi-gmail.mjs"  # 1.5.0: one bundled file and its SHA256SUMS
SKIP_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".venv"}
SKIP_SUFFIXES = (".pyc", ".pyo")
LOCK_TIMEOUT = 300


class BuildError(Exception):
    """The build cannot go on (Czech message)."""


def say(line: str) -> None:
    print(line, flush=True)


def warn(line: str) -> None:
    sys.stderr.write(f"POZOR: {line}\n")
    sys.stderr.flush()


def read_project() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    return data


def _toml_string(value: str) -> str:
    # A JSON string is a valid TOML basic string (same escapes, \uXXXX included).
    return json.dumps(value, ensure_ascii=False)


def _toml_list(values: Sequence[str], indent: str = "    ") -> str:
    if not values:
        return "[]"
    return "[\n" + "".join(f"{indent}{_toml_string(v)},\n" for v in values) + "]"


def release_pyproject(project_data: dict[str, Any]) -> str:
    """pyproject.toml of the add-on: same runtime dependencies and console script, only the server package."""
    project = project_data["project"]
    scripts: dict[str, str] = project.get("scripts", {})
    if scripts.get(ADDON_NAME) != f"{PACKAGE}.cli:main":
        raise BuildError(f"pyproject.toml nemá konzolový skript {ADDON_NAME} = {PACKAGE}.cli:main")
    build_system = project_data.get("build-system", {"requires": ["hatchling"], "build-backend": "hatchling.build"})
    lines = [
        "# Generated by scripts/build_release.py: the release build of mcp-multi-gmail, Miládka's add-on.",
        "# Started from the vault root with:",
        "#   uv run --no-dev --project .doplnky/mcp-multi-gmail mcp-multi-gmail --config system/multigmail.json",
        "",
        "[project]",
        f"name = {_toml_string(project['name'])}",
        f"version = {_toml_string(project['version'])}",
        f"description = {_toml_string(project.get('description', ''))}",
        'readme = "README.md"',
        f"license = {_toml_string(project.get('license', 'Apache-2.0'))}",
        'license-files = ["LICENSE", "NOTICE"]',
        f"requires-python = {_toml_string(project['requires-python'])}",
        f"dependencies = {_toml_list(project['dependencies'])}",
        "",
        "[project.scripts]",
        *(f"{_toml_string(name)} = {_toml_string(target)}" for name, target in scripts.items()),
        "",
        "[build-system]",
        f"requires = {_toml_list(build_system['requires'])}",
        f"build-backend = {_toml_string(build_system['build-backend'])}",
        "",
        "[tool.hatch.build.targets.wheel]",
        f'packages = ["src/{PACKAGE}"]',
        "",
    ]
    return "\n".join(lines)


def release_marker(version: str) -> str:
    return (
        '"""Generated by scripts/build_release.py. Its presence makes this a release build:\n'
        "the server then runs only from Miládka's add-on folder (see layout.check_location).\n"
        '"""\n\n'
        f"VERSION = {_toml_string(version)}\n"
    )


def find_uv() -> list[str] | None:
    """The uv command: $UV (set by `uv run`), uv on PATH, or the uv Python package."""
    from_env = os.environ.get("UV", "").strip()
    if from_env and Path(from_env).is_file():
        return [from_env]
    found = shutil.which("uv")
    if found:
        return [found]
    if importlib.util.find_spec("uv") is not None:
        return [sys.executable, "-m", "uv"]
    return None


def uv_environment() -> dict[str, str]:
    """The caller's environment without the outer virtualenv (uv would warn that it does not match)."""
    return {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT")}


def lock(out: Path) -> str:
    """Lock the add-on's pyproject; the project's lock is the starting point (uv keeps its versions)."""
    shutil.copy2(ROOT / "uv.lock", out / "uv.lock")
    uv = find_uv()
    if uv is None:
        warn("uv není k dispozici; uv.lock je zkopírovaný z projektu (uv ho při prvním spuštění doplněk přepočítá).")
        return "zkopírovaný (bez uv)"
    problems: list[str] = []
    for extra in (["--offline"], []):
        try:
            done = subprocess.run(
                [*uv, "lock", *extra],
                cwd=out,
                env=uv_environment(),
                capture_output=True,
                text=True,
                timeout=LOCK_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            problems.append(str(error))
            continue
        if done.returncode == 0:
            return "přepočítaný " + ("z mezipaměti uv" if extra else "(s přístupem k indexu)")
        problems.append(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"kód {done.returncode}")
    shutil.copy2(ROOT / "uv.lock", out / "uv.lock")
    warn(
        "uv lock pro doplněk selhal (" + "; ".join(problems) + "); uv.lock je zkopírovaný z projektu "
        "(uv ho při prvním spuštění doplňku přepočítá)."
    )
    return "zkopírovaný (uv lock selhal)"


def _copy_tree(source: Path, target: Path, written: list[Path]) -> None:
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if any(part in SKIP_DIRS for part in relative.parts) or path.name.endswith(SKIP_SUFFIXES):
            continue
        destination = target / relative
        if path.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
        elif path.is_file():
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, destination)
            written.append(destination)


class Previous:
    """What an add-on folder holds before a build: which earlier build, its program, what stays."""

    # A plain class: the tests load this script without registering it as a module, which a
    # dataclass needs.
    def __init__(self) -> None:
        self.builds: list[str] = []  # e.g. "2.0.0", "1.5.0 (Node.js)"
        self.program: list[str] = []  # top-level names replaced
        self.kept: list[str] = []  # top-level names left alone


def _listed_names(sums: Path) -> set[str]:
    """Top-level names a SHA256SUMS lists (`<hex>  <path>`, or `<hex> *<path>` in binary mode)."""
    names: set[str] = set()
    try:
        rows = sums.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return names
    for row in rows:
        parts = row.split(maxsplit=1)
        if len(parts) == 2 and len(parts[0]) == 64:
            name = parts[1].lstrip("*").replace("\\", "/").split("/", 1)[0]
            if name not in ("", ".", ".."):
                names.add(name)
    return names


def _version_2x(pyproject: Path) -> str | None:
    try:
        with pyproject.open("rb") as handle:
            project = tomllib.load(handle).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    if project.get("name") != ADDON_NAME:
        return None
    return str(project.get("version", "2.x"))


def _is_kept(name: str, path: Path) -> bool:
    if name in KEPT_DIRS:
        return path.is_dir()
    if name in KEPT_FILES or (name.startswith(KEPT_PREFIX) and name.endswith(KEPT_SUFFIX)):
        return path.is_file()
    return False


def survey(out: Path) -> Previous:
    """Account for every top-level entry of the add-on folder, or refuse (BuildError) naming the rest.

    Reads only; nothing in the folder changes here, so a refusal leaves it exactly as it was.
    """
    previous = Previous()
    if out.exists() and not out.is_dir():
        raise BuildError(f"{out} existuje a není to složka")
    if not out.is_dir():
        return previous
    entries = {path.name: path for path in out.iterdir()}
    if not entries:
        return previous
    program: set[str] = set()
    version = _version_2x(out / "pyproject.toml")
    if version is not None:
        previous.builds.append(version)
        program |= set(MANAGED) | _listed_names(out / "SHA256SUMS")
    if (out / NODE_PROGRAM).is_file():
        previous.builds.append("1.5.0 (Node.js)")
        program |= {NODE_PROGRAM, "SHA256SUMS"} | _listed_names(out / "SHA256SUMS")
    unknown: list[str] = []
    for name in sorted(entries):
        if _is_kept(name, entries[name]):
            previous.kept.append(name)
        elif name in program and previous.builds:
            previous.program.append(name)
        else:
            unknown.append(name + ("/" if entries[name].is_dir() else ""))
    if unknown:
        if not previous.builds:
            raise BuildError(
                f"{out} není prázdná a není v ní předchozí sestavení doplňku (2.x ani 1.5.0); "
                f"leží v ní {', '.join(unknown)}; nic jsem nepřepsal"
            )
        raise BuildError(
            f"ve složce {out} je vedle předchozího sestavení {', '.join(previous.builds)} i to, co k němu "
            f"nepatří: {', '.join(unknown)}; nic jsem nezměnil. Přesuňte to jinam (nebo smažte) a spusťte "
            "instalaci znovu."
        )
    return previous


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _swap(out: Path, staging: Path, previous: Previous) -> None:
    """Replace the previous program by the staged build; the kept files are never touched.

    Stopped at any point (Ctrl+C, a crash), the folder still shows an earlier build to the next run's
    `survey`: the previous build's mark (`pyproject.toml`, 1.5.0's `mcp-multi-gmail.mjs`) goes last,
    and the new `SHA256SUMS`, which lists every new name, comes first."""
    out.mkdir(parents=True, exist_ok=True)
    incoming = sorted(staging.iterdir(), key=lambda p: (p.name != "SHA256SUMS", p.name == "pyproject.toml", p.name))
    names = {p.name for p in incoming}
    marks = ("pyproject.toml", NODE_PROGRAM)
    for name in previous.program:
        if name not in names and name not in marks:
            _remove(out / name)
    for path in incoming:
        target = out / path.name
        if path.is_dir() or (target.is_dir() and not target.is_symlink()):
            _remove(target)  # os.replace puts a file over a file at once, but a folder over nothing only
        os.replace(path, target)
    if NODE_PROGRAM in previous.program and NODE_PROGRAM not in names:
        _remove(out / NODE_PROGRAM)


def _report(out: Path, previous: Previous, installed: Sequence[str]) -> None:
    if not previous.builds:
        return
    say(f"Předchozí sestavení v {out}: {', '.join(previous.builds)}.")
    say("Nahrazeno: " + (", ".join(previous.program) or "nic"))
    say("Nově zapsáno: " + ", ".join(installed))
    say("Ponecháno beze změny: " + (", ".join(previous.kept) or "nic"))
    if any(b.endswith("(Node.js)") for b in previous.builds):
        say(
            "Dál (README, oddíl Přechod z verze 1.5.0): v .mcp.json vyměňte příkaz node … mcp-multi-gmail.mjs "
            "za uv run …, hlídače spouštějte přes uv run … --wait místo node … --wait a začněte novou konverzaci."
        )


def _sha256(path: Path) -> str:
    """The file's SHA-256 in hex, read in 1 MiB pieces (an archive need not fit in memory)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_checksums(out: Path, written: Sequence[Path]) -> Path:
    """SHA256SUMS in the `sha256sum -c` format: `<hex>  <relative path>`, sorted by path."""
    rows = []
    for path in sorted({p.relative_to(out).as_posix() for p in written}):
        rows.append(f"{_sha256(out / path)}  {path}\n")
    target = out / "SHA256SUMS"
    target.write_text("".join(rows), encoding="utf-8", newline="\n")
    return target


def assemble(out: Path) -> tuple[str, list[Path]]:
    """Write the build of this checkout into the empty folder `out`; the version and the files written."""
    project_data = read_project()
    version = str(project_data["project"]["version"])
    written: list[Path] = []

    package_target = out / "src" / PACKAGE
    _copy_tree(ROOT / "src" / PACKAGE, package_target, written)
    marker = package_target / "_release.py"
    marker.write_text(release_marker(version), encoding="utf-8")
    written.append(marker)

    for name in FILES:
        source = ROOT / name
        if not source.is_file():
            raise BuildError(f"v projektu chybí {name}")
        destination = out / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
        written.append(destination)

    pyproject = out / "pyproject.toml"
    pyproject.write_text(release_pyproject(project_data), encoding="utf-8")
    written.append(pyproject)

    lock_state = lock(out)
    written.append(out / "uv.lock")
    write_checksums(out, written)
    say(f"Doplněk mcp-multi-gmail {version} sestaven ({len(written)} souborů, uv.lock {lock_state}).")
    return version, written


def _staging(out: Path) -> Path:
    # Beside the add-on folder, so that moving the finished build in is a rename on one disk.
    out.parent.mkdir(parents=True, exist_ok=True)
    return Path(tempfile.mkdtemp(prefix=f".{ADDON_NAME}-novy-", dir=out.parent))


def build(out: Path, *, archive: Path | None = None) -> Path:
    """Install into the add-on folder `out`: this checkout's build, or the verified `archive`."""
    out = out.resolve()
    previous = survey(out)
    if archive is not None:
        verified_archive(archive)
    parent_existed = out.parent.exists()
    staging = _staging(out)
    try:
        if archive is None:
            version, _ = assemble(staging)
        else:
            version = unpack(archive, staging)
        installed = sorted(p.name for p in staging.iterdir())
        _swap(out, staging, previous)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if not parent_existed:  # a refusal leaves no empty .doplnky/ behind
            with contextlib.suppress(OSError):
                out.parent.rmdir()
        raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    where = f" z archivu {archive.name}" if archive is not None else ""
    say(f"Doplněk mcp-multi-gmail {version} nainstalován{where} do {out}.")
    _report(out, previous, installed)
    say("Kontrola: sha256sum -c SHA256SUMS (ve složce doplňku).")
    return out


# ------------------------------------------------------------------ the archive


def archive_name(version: str) -> str:
    return f"{ADDON_NAME}-{version}.tar.gz"


def _tar_filter(info: tarfile.TarInfo) -> tarfile.TarInfo:
    # The same bytes for the same build: no owner, no times (mtime 0), plain permissions.
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def update_sums(sums: Path, name: str, digest: str) -> None:
    """Put `name`'s line into a `sha256sum -c` file, keeping the lines of other archives."""
    rows = []
    if sums.is_file():
        rows = [r for r in sums.read_text(encoding="utf-8").splitlines() if r.split(maxsplit=1)[1:] != [name]]
    rows.append(f"{digest}  {name}")
    sums.write_text("".join(f"{r}\n" for r in sorted(rows, key=lambda r: r.split(maxsplit=1)[-1])), encoding="utf-8")


def _gzip_tar(target: Path, staging: Path, top: str) -> None:
    with (
        target.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as zipped,
        tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as tar,
    ):
        tar.add(staging, arcname=top, recursive=False, filter=_tar_filter)
        for path in sorted(staging.rglob("*")):
            tar.add(path, arcname=f"{top}/{path.relative_to(staging).as_posix()}", recursive=False, filter=_tar_filter)


def make_archive(dist: Path) -> Path:
    """dist/mcp-multi-gmail-<version>.tar.gz (one folder mcp-multi-gmail-<version>/), beside it a copy
    of this script (it installs from the archive without a clone) and the SHA256SUMS of both."""
    dist = dist.resolve()
    dist.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{ADDON_NAME}-archiv-", dir=dist))
    try:
        version, _ = assemble(staging)
        name = archive_name(version)
        partial = dist / f".{name}.part"
        _gzip_tar(partial, staging, name.removesuffix(".tar.gz"))
        os.replace(partial, dist / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    installer = dist / INSTALLER
    if installer.resolve() != Path(__file__).resolve():
        shutil.copyfile(Path(__file__), installer)
    for path in (dist / name, installer):
        update_sums(dist / "SHA256SUMS", path.name, _sha256(path))
    say(f"Archiv: {dist / name}")
    say(f"Instalátor: {installer} (bez klonu: uv run --no-project python {INSTALLER} --vault <vault> --from {name})")
    say(f"SHA256SUMS: {dist / 'SHA256SUMS'}")
    say(f"Kontrola: sha256sum -c --ignore-missing SHA256SUMS (ve složce {dist}).")
    return dist / name


def verified_archive(archive: Path) -> str:
    """The archive's SHA-256 once it matches its line in the SHA256SUMS beside it; BuildError otherwise."""
    if not archive.is_file():
        raise BuildError(f"archiv {archive} neexistuje; nic jsem nezměnil")
    sums = archive.parent / "SHA256SUMS"
    if not sums.is_file():
        raise BuildError(
            f"vedle archivu {archive.name} chybí SHA256SUMS ({sums}), takže archiv nejde ověřit; stáhněte ho "
            "spolu s archivem ze stejného místa. Nic jsem nezměnil."
        )
    expected = None
    for row in sums.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = row.split(maxsplit=1)
        if len(parts) == 2 and parts[1].lstrip("*") == archive.name:
            expected = parts[0].lower()
    if expected is None:
        raise BuildError(f"{sums} nemá řádek pro {archive.name}, takže archiv nejde ověřit; nic jsem nezměnil")
    digest = _sha256(archive)
    if digest != expected:
        raise BuildError(
            f"archiv {archive.name} nesouhlasí se SHA256SUMS (čekal jsem {expected}, má {digest}); "
            "je poškozený nebo podvržený. Nic jsem nezměnil; stáhněte archiv i SHA256SUMS znovu."
        )
    return expected


def _copy_member(source: IO[bytes], target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("wb") as handle:
        shutil.copyfileobj(source, handle)


def unpack(archive: Path, staging: Path) -> str:
    """Unpack a verified archive into `staging` and check it against its own SHA256SUMS; its version."""
    try:
        with tarfile.open(archive, mode="r:gz") as tar:
            members = tar.getmembers()
            tops = {m.name.split("/", 1)[0] for m in members}
            if len(tops) != 1 or not next(iter(tops)).startswith(f"{ADDON_NAME}-"):
                raise BuildError(f"archiv {archive.name} nemá jedinou složku {ADDON_NAME}-<verze>/; nic jsem nezměnil")
            top = next(iter(tops))
            for member in members:
                relative = member.name[len(top) :].lstrip("/")
                parts = relative.split("/") if relative else []
                if member.name.startswith("/") or ".." in parts or "\\" in member.name:
                    raise BuildError(f"archiv {archive.name} obsahuje cestu {member.name}; nic jsem nezměnil")
                if member.isdir():
                    (staging / relative).mkdir(parents=True, exist_ok=True)
                elif member.isfile() and parts:
                    extracted = tar.extractfile(member)
                    assert extracted is not None
                    _copy_member(extracted, staging / relative)
                else:
                    raise BuildError(
                        f"archiv {archive.name} obsahuje {member.name}, což není soubor; nic jsem nezměnil"
                    )
    except (tarfile.TarError, OSError, EOFError) as error:
        raise BuildError(f"archiv {archive.name} nejde rozbalit ({error}); nic jsem nezměnil") from error
    files = {p.relative_to(staging).as_posix() for p in staging.rglob("*") if p.is_file()}
    if "SHA256SUMS" not in files:
        raise BuildError(f"archiv {archive.name} nemá uvnitř SHA256SUMS, není to sestavení doplňku; nic jsem nezměnil")
    listed: set[str] = set()
    for row in (staging / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, _, name = row.partition("  ")
        good = name in files and _sha256(staging / name) == digest
        if not good:
            raise BuildError(f"soubor {name} v archivu {archive.name} nesouhlasí s jeho SHA256SUMS; nic jsem nezměnil")
        listed.add(name)
    unlisted = sorted(files - listed - {"SHA256SUMS"})
    if unlisted:
        raise BuildError(
            f"archiv {archive.name} nese soubory mimo své SHA256SUMS: {', '.join(unlisted)}; nic jsem nezměnil"
        )
    version = _version_2x(staging / "pyproject.toml")
    if version is None or not (staging / "src" / PACKAGE / "_release.py").is_file():
        raise BuildError(f"archiv {archive.name} není vydané sestavení doplňku {ADDON_NAME}; nic jsem nezměnil")
    return version


# ------------------------------------------------------------------ the command line


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description="Sestaví doplněk mcp-multi-gmail pro Miládku.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--vault", type=Path, help="složka Miládky; doplněk půjde do <vault>/<kind>/mcp-multi-gmail")
    where.add_argument("--out", type=Path, help="přímo složka doplňku")
    where.add_argument(
        "--archive", action="store_true", help="místo instalace zapíše dist/mcp-multi-gmail-<verze>.tar.gz a SHA256SUMS"
    )
    parser.add_argument(
        "--kind",
        choices=KINDS,
        default=None,
        help="složka doplňků (česká / anglická Miládka); jinak ta, co ve vaultu už je",
    )
    parser.add_argument("--from", dest="source", type=Path, help="instaluje z archivu ověřeného SHA256SUMS vedle něj")
    parser.add_argument("--dist", type=Path, default=ROOT / "dist", help="kam --archive zapíše (výchozí dist/)")
    return parser


def _kind(vault: Path, asked: str | None) -> str:
    """The add-on folder's kind: as asked, else the one the vault already uses, else the Czech one."""
    if asked is not None:
        return asked
    present = [k for k in KINDS if (vault / k / ADDON_NAME).exists()] or [k for k in KINDS if (vault / k).is_dir()]
    if len(present) > 1:
        raise BuildError(
            f"ve {vault} je {' i '.join(p + '/' for p in present)}; řekněte, kam doplněk patří: --kind .doplnky "
            "nebo --kind .addons. Nic jsem nezměnil."
        )
    return present[0] if present else KINDS[0]


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.source is None and not (ROOT / "src" / PACKAGE).is_dir():
            raise BuildError(
                f"{ROOT} není klon repozitáře mcp-multi-gmail; odsud umím jen instalovat z archivu: "
                "--vault <vault> --from mcp-multi-gmail-<verze>.tar.gz"
            )
        if args.archive:
            if args.source is not None or args.kind is not None:
                raise BuildError("--archive nejde spojit s --from ani --kind")
            make_archive(args.dist)
            return 0
        if args.vault is not None:
            vault: Path = args.vault
            if not vault.is_dir():
                raise BuildError(f"složka {vault} neexistuje")
            if not (vault / ".miladka" / "VERSION").is_file():
                warn(f"{vault} nemá .miladka/VERSION; sestavený doplněk tam odmítne běžet.")
            out = vault / _kind(vault, args.kind) / ADDON_NAME
        else:
            out = args.out
        build(out, archive=args.source)
    except BuildError as error:
        sys.stderr.write(f"chyba: {error}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
