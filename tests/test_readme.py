"""What the READMEs promise a reader of a fresh clone: links that lead somewhere, the 1.5.0 move."""

from __future__ import annotations

import re
import subprocess

import pytest

from support import ROOT

READMES = ["README.md", "README.en.md"]


def tracked() -> set[str]:
    done = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return set(done.stdout.splitlines())


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("name", READMES)
def test_local_links_lead_to_tracked_files_and_headings(name: str) -> None:
    text = (ROOT / name).read_text(encoding="utf-8")
    files = tracked()
    headings = {anchor(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert "benchmarks/README.md#latest-results" in links  # the committed table, not a run's output
    for link in links:
        if re.match(r"[a-z]+:", link):
            continue
        path, _, fragment = link.partition("#")
        if path:
            assert path in files, f"{name} links to {path}, which a clone does not have"
        if fragment and not path:
            assert fragment in headings, f"{name} links to #{fragment}, which is no heading"
    bench = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert "## Latest results" in bench and "\n|" in bench.split("## Latest results", 1)[1]


@pytest.mark.parametrize(
    ("name", "heading"), [("README.md", "## Přechod z verze 1.5.0"), ("README.en.md", "## Moving from 1.5.0")]
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
