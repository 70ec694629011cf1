"""What the READMEs and their docs pages promise a reader of a fresh clone: links that lead
somewhere, a README short enough to read in five minutes that reaches every page, a minimal
configuration that loads, and the 1.5.0 move."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from mcp_multi_gmail.config.loader import load_config
from support import ROOT

READMES = ["README.md", "README.en.md"]
# The sections the READMEs hand on to docs/, in both languages (Czech, English).
PAGES = [
    ("docs/konfigurace.md", "docs/en/configuration.md"),
    ("docs/nastroje.md", "docs/en/tools.md"),
    ("docs/bezpecnost.md", "docs/en/security.md"),
    ("docs/hlidac.md", "docs/en/watcher.md"),
    ("docs/prechod-z-1.5.0.md", "docs/en/moving-from-1.5.0.md"),
    ("docs/potize.md", "docs/en/troubleshooting.md"),
    ("docs/vyvoj.md", "docs/en/development.md"),
]
DOCS = READMES + [page for pair in PAGES for page in pair]


def tracked() -> set[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(done.stdout.splitlines())


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def headings(path: str) -> set[str]:
    text = (ROOT / path).read_text(encoding="utf-8")
    return {anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}


def local_links(name: str) -> list[tuple[str, str]]:
    """(repository path or "" for the page itself, fragment) of every relative link in `name`."""
    text = (ROOT / name).read_text(encoding="utf-8")
    out = []
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        path, _, fragment = link.partition("#")
        target = os.path.normpath(os.path.join(os.path.dirname(name), path)).replace(os.sep, "/") if path else ""
        out.append((target, fragment))
    return out


@pytest.mark.parametrize("name", DOCS)
def test_local_links_lead_to_tracked_files_and_headings(name: str) -> None:
    files = tracked()
    for target, fragment in local_links(name):
        if target:
            assert target in files, f"{name} links to {target}, which a clone does not have"
        if fragment and (not target or target.endswith(".md")):
            assert fragment in headings(target or name), f"{name} links to {target}#{fragment}, which is no heading"


def test_benchmark_table_is_the_committed_one() -> None:
    for name in READMES:
        assert ("benchmarks/README.md", "latest-results") in local_links(name)  # not a run's output
    bench = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert "## Latest results" in bench and "\n|" in bench.split("## Latest results", 1)[1]


@pytest.mark.parametrize(("name", "column"), [("README.md", 0), ("README.en.md", 1)])
def test_readme_is_short_and_reaches_every_page(name: str, column: int) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    assert text.count("\n") <= 250
    linked = {target for target, _ in local_links(name)}
    for pair in PAGES:
        assert pair[column] in linked, (name, pair[column])
    # Each page leads back to its README and names its translation.
    for pair in PAGES:
        page, other = pair[column], pair[1 - column]
        targets = {target for target, _ in local_links(page)}
        assert name in targets and other in targets, page


@pytest.mark.parametrize("name", READMES)
def test_the_minimal_configuration_loads(name: str, tmp_path: Path) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    section = text.split("\n## Nastavení\n" if name == "README.md" else "\n## Configuration\n", 1)[1]
    config = section.split("```json\n", 1)[1].split("```", 1)[0]
    passwords = re.search(r"`(\{\"prace\": \"[^`]+\})`", section)
    assert passwords is not None
    secrets = tmp_path / ".miladka" / "secrets" / "multigmail"
    secrets.mkdir(parents=True)
    (secrets / "hesla.json").write_text(passwords.group(1), encoding="utf-8")
    (tmp_path / "multigmail.json").write_text(config, encoding="utf-8")
    loaded = load_config(tmp_path / "multigmail.json")
    (account,) = loaded.accounts
    assert account.name == "prace" and account.processed_label == "Asistent" and not account.can_send
    assert loaded.attachment_dirs == ()
    assert [w for w in loaded.warnings if "ještě není vložené" in w]  # the placeholder only warns
    assert json.loads(config)["passwords_file"] == ".miladka/secrets/multigmail/hesla.json"


@pytest.mark.parametrize(
    ("name", "heading"),
    [("docs/prechod-z-1.5.0.md", "## Přechod z verze 1.5.0"), ("docs/en/moving-from-1.5.0.md", "## Moving from 1.5.0")],
)
def test_moving_from_1_5_0_covers_every_change(name: str, heading: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    section = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    for term in [
        "`\\`",
        "`processed_label`",
        "`download_dir`",
        "`attachment_dirs`",
        "`duplicate_send`",
        "`repeat: true`",
        "`invalid_input`",
        "`isError`",
        "`{name, address}`",
        "`wait-known.json`",
        "--check-config",
    ]:
        assert term in section, (name, term)


@pytest.mark.parametrize(
    ("name", "heading"), [("README.md", "## Přechod z verze 1.5.0"), ("README.en.md", "## Moving from 1.5.0")]
)
def test_readme_keeps_the_1_5_0_section_that_the_installer_names(name: str, heading: str) -> None:
    # build_release.py and `--check-config` point 1.5.0 users at this README section by name.
    text = (ROOT / name).read_text(encoding="utf-8")
    section = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    assert "prechod-z-1.5.0.md" in section or "moving-from-1.5.0.md" in section
