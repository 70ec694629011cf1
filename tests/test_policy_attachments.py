"""Table-driven tests of the attachment rules (policy/attachments.py), hostile inputs first: which
files may be attached, from which folders, under which names, and how many."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.policy import AllowedAttachment, check_count, check_single_name, resolve_attachments
from policy_refusals import refused


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """tmp/mail (allowed) with files, tmp/mail-other and tmp/outside (not allowed)."""
    for d in ("mail/sub", "mail-other", "outside", "real-mail"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "mail/report.pdf").write_bytes(b"%PDF")
    (tmp_path / "mail/Invoice X-17.pdf").write_bytes(b"%PDF")
    (tmp_path / "mail/sub/notes.txt").write_text("n")
    (tmp_path / "mail-other/x.txt").write_text("x")
    (tmp_path / "outside/secret.txt").write_text("s")
    (tmp_path / "real-mail/doc.txt").write_text("d")
    (tmp_path / "mail/link-out.txt").symlink_to(tmp_path / "outside/secret.txt")
    (tmp_path / "mail/link-in.txt").symlink_to(tmp_path / "mail/sub/notes.txt")
    (tmp_path / "mail/dangling.txt").symlink_to(tmp_path / "mail/missing.txt")
    (tmp_path / "mail/loop").symlink_to(tmp_path / "mail/loop")
    (tmp_path / "mail/link-dir").symlink_to(tmp_path / "outside")
    (tmp_path / "mail-link").symlink_to(tmp_path / "real-mail")
    os.link(tmp_path / "outside/secret.txt", tmp_path / "mail/hard.txt")
    os.mkfifo(tmp_path / "mail/pipe")
    return tmp_path


def test_attachments_empty_paths_need_no_dirs() -> None:
    assert resolve_attachments([], []) == []


@pytest.mark.parametrize(
    ("given", "dirs", "expected"),
    [
        ("mail/report.pdf", ["mail"], "mail/report.pdf"),
        ("mail/sub/notes.txt", ["mail"], "mail/sub/notes.txt"),
        ("mail/sub/../report.pdf", ["mail"], "mail/report.pdf"),
        ("mail/./sub//notes.txt", ["mail"], "mail/sub/notes.txt"),
        ("mail/link-in.txt", ["mail"], "mail/sub/notes.txt"),
        ("mail/hard.txt", ["mail"], "mail/hard.txt"),
        ("real-mail/doc.txt", ["mail-link"], "real-mail/doc.txt"),
        ("mail-link/doc.txt", ["mail-link"], "real-mail/doc.txt"),
        ("mail-link/doc.txt", ["real-mail"], "real-mail/doc.txt"),
        ("outside/secret.txt", ["mail", "outside"], "outside/secret.txt"),
        ("mail/report.pdf", ["mail/"], "mail/report.pdf"),
        ("mail/Invoice X-17.pdf", ["mail"], "mail/Invoice X-17.pdf"),
    ],
    ids=[
        "plain-file",
        "nested-file",
        "dotdot-staying-inside",
        "dot-and-double-slash",
        "symlink-pointing-inside",
        "hard-link-is-the-same-file-so-its-realpath-stays-inside",
        "allowed-dir-given-through-symlink",
        "file-and-dir-through-symlink",
        "file-through-symlink-dir-real",
        "second-allowed-dir",
        "dir-with-trailing-slash",
        "capitals-and-spaces-in-the-name",
    ],
)
def test_attachments_allowed(tree: Path, given: str, dirs: list[str], expected: str) -> None:
    result = resolve_attachments([str(tree / given)], [tree / d for d in dirs])
    real = Path(os.path.realpath(tree / expected))
    assert result == [AllowedAttachment(path=real, filename=real.name)]


def test_attachments_filename_is_real_basename(tree: Path) -> None:
    [att] = resolve_attachments([str(tree / "mail/link-in.txt")], [tree / "mail"])
    assert att.filename == "notes.txt"


def test_attachments_several_in_order(tree: Path) -> None:
    got = resolve_attachments([str(tree / "mail/sub/notes.txt"), str(tree / "mail/report.pdf")], [tree / "mail"])
    assert [a.filename for a in got] == ["notes.txt", "report.pdf"]


def test_attachments_root_dir_allows_everything_outside_pseudo_fs(tree: Path) -> None:
    [att] = resolve_attachments([str(tree / "outside/secret.txt")], [Path("/")])
    assert att.filename == "secret.txt"


@pytest.mark.parametrize(
    ("given", "dirs", "code", "fragments"),
    [
        ("mail/link-out.txt", ["mail"], "send_forbidden", ["outside the folders", "real path", "user's own"]),
        ("mail-other/x.txt", ["mail"], "send_forbidden", ["outside the folders"]),
        ("mail/../outside/secret.txt", ["mail"], "send_forbidden", ["outside the folders"]),
        ("mail/sub/../../mail-other/x.txt", ["mail"], "send_forbidden", ["outside the folders"]),
        ("mail/link-dir/secret.txt", ["mail"], "send_forbidden", ["outside the folders"]),
        ("outside/secret.txt", ["mail"], "send_forbidden", ["outside the folders"]),
        ("mail", ["mail"], "invalid_input", ["not a regular file"]),
        ("mail/sub", ["mail"], "invalid_input", ["not a regular file"]),
        ("mail/pipe", ["mail"], "invalid_input", ["not a regular file"]),
        ("mail/missing.pdf", ["mail"], "not_found", ["No readable file"]),
        ("outside/missing.pdf", ["mail"], "not_found", ["No readable file"]),
        ("mail/dangling.txt", ["mail"], "not_found", ["No readable file"]),
        ("mail/loop", ["mail"], "not_found", ["No readable file"]),
        ("mail/report.pdf/x", ["mail"], "not_found", ["No readable file"]),
    ],
    ids=[
        "symlink-pointing-out",
        "sibling-with-common-prefix",
        "dotdot-escaping",
        "dotdot-escaping-to-sibling",
        "symlinked-dir-pointing-out",
        "plainly-outside",
        "the-allowed-dir-itself",
        "a-directory",
        "a-fifo",
        "missing-file",
        "missing-file-outside-is-missing-too",
        "dangling-symlink",
        "symlink-loop",
        "file-used-as-dir",
    ],
)
def test_attachments_refused(tree: Path, given: str, dirs: list[str], code: str, fragments: list[str]) -> None:
    err = refused(lambda: resolve_attachments([str(tree / given)], [tree / d for d in dirs]), code, *fragments)
    assert "enable" not in err.message.lower() and "add the folder" not in err.message.lower()


def test_attachments_outside_names_the_real_path_only_when_it_differs(tree: Path) -> None:
    plain = refused(
        lambda: resolve_attachments([str(tree / "outside/secret.txt")], [tree / "mail"]),
        "send_forbidden",
        f'The file "{tree / "outside/secret.txt"}" is outside the folders',
    )
    assert "real path" not in plain.message
    refused(
        lambda: resolve_attachments([str(tree / "mail/link-out.txt")], [tree / "mail"]),
        "send_forbidden",
        f'The file "{tree / "mail/link-out.txt"}" (its real path is {os.path.realpath(tree / "outside/secret.txt")})',
    )


def test_attachments_file_gone_after_its_path_was_resolved(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Deleted between resolving the path and reading its type: reported as missing, nothing attached.
    target = os.path.realpath(tree / "mail/report.pdf")
    real_stat = os.stat

    def stat(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        if isinstance(path, str | os.PathLike) and os.fspath(path) == target:
            raise FileNotFoundError(target)
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    refused(
        lambda: resolve_attachments([str(tree / "mail/report.pdf")], [tree / "mail"]),
        "not_found",
        f'No readable file at "{tree / "mail/report.pdf"}". Nothing was attached.',
    )


@pytest.mark.parametrize("count", [1, 100])
def test_attachments_up_to_100_are_allowed(tree: Path, count: int) -> None:
    got = resolve_attachments([str(tree / "mail/report.pdf")] * count, [tree / "mail"])
    assert len(got) == count


def test_attachments_over_100_refused_before_any_file_is_looked_at(tree: Path) -> None:
    refused(
        lambda: resolve_attachments([str(tree / "mail/missing.pdf")] * 101, [tree / "mail"]),
        "invalid_input",
        "101 attachments in one message; at most 100 are accepted. Nothing was sent or saved.",
    )


@pytest.mark.parametrize("limit", [0, 1, 500])
def test_check_count_at_its_limit_and_one_over(limit: int) -> None:
    check_count("references", ["<a@x>"] * limit, limit)
    refused(
        lambda: check_count("references", ["<a@x>"] * (limit + 1), limit),
        "invalid_input",
        f"{limit + 1} references in one message; at most {limit} are accepted. Nothing was sent or saved.",
    )


def test_single_name_files_pass(tree: Path) -> None:
    files = resolve_attachments([str(tree / "mail/report.pdf"), str(tree / "mail/sub/notes.txt")], [tree / "mail"])
    check_single_name(files)
    check_single_name([])


@pytest.mark.parametrize("links", [2, 3])
def test_hard_linked_file_refused(tree: Path, links: int) -> None:
    # mail/hard.txt is also outside/secret.txt: its real path is inside, its other name is not.
    for i in range(links - 2):
        os.link(tree / "outside/secret.txt", tree / f"outside/again-{i}.txt")
    files = resolve_attachments([str(tree / "mail/report.pdf"), str(tree / "mail/hard.txt")], [tree / "mail"])
    refused(
        lambda: check_single_name(files),
        "send_forbidden",
        f'The file "{tree / "mail/hard.txt"}" has {links} names (hard links)',
        "Nothing was attached, sent or saved.",
        "A file with a single name, such as a copy, can be attached.",
    )


def test_single_name_check_skips_a_vanished_file_and_checks_the_rest(tree: Path) -> None:
    # A file gone since it was resolved is reported when it is read; the files after it are still checked.
    gone = AllowedAttachment(path=tree / "mail/gone.txt", filename="gone.txt")
    hard = AllowedAttachment(path=tree / "mail/hard.txt", filename="hard.txt")
    check_single_name([gone])
    refused(lambda: check_single_name([gone, hard]), "send_forbidden", "hard.txt", "has 2 names")


def test_attachments_outside_names_allowed_dirs(tree: Path) -> None:
    refused(
        lambda: resolve_attachments([str(tree / "mail-other/x.txt")], [tree / "mail"]),
        "send_forbidden",
        f'"{tree / "mail"}"',
        "Nothing was attached",
    )


def test_attachments_one_bad_path_refuses_all(tree: Path) -> None:
    refused(
        lambda: resolve_attachments([str(tree / "mail/report.pdf"), str(tree / "outside/secret.txt")], [tree / "mail"]),
        "send_forbidden",
        "secret.txt",
    )


@pytest.mark.parametrize(
    ("given", "dirs", "code", "fragment"),
    [
        ("/proc/self/environ", ["/"], "invalid_input", "system file"),
        ("/proc/self/environ", ["/proc"], "invalid_input", "system file"),
        ("/proc/self/environ", ["/proc/self"], "invalid_input", "system file"),
        ("/dev/null", ["/"], "invalid_input", "system file"),
        ("/sys/kernel/mm/transparent_hugepage/enabled", ["/"], "invalid_input", "system file"),
        ("/proc/self/environ", ["TREE"], "send_forbidden", "outside the folders"),
        ("/etc/passwd", ["TREE"], "send_forbidden", "outside the folders"),
    ],
    ids=["proc-root", "proc-allowed", "proc-self-allowed", "dev-null", "sys", "proc-outside", "etc-passwd"],
)
def test_attachments_system_files(tree: Path, given: str, dirs: list[str], code: str, fragment: str) -> None:
    if not os.path.exists(given):
        pytest.skip(f"{given} does not exist here")
    allowed = [tree / "mail" if d == "TREE" else Path(d) for d in dirs]
    refused(lambda: resolve_attachments([given], allowed), code, fragment)


def test_attachments_symlink_to_proc_refused_even_with_root_allowed(tree: Path) -> None:
    (tree / "mail/env").symlink_to("/proc/self/environ")
    refused(lambda: resolve_attachments([str(tree / "mail/env")], [Path("/")]), "invalid_input", "system file")


@pytest.mark.parametrize("dirs", [[], ()], ids=["empty-list", "empty-tuple"])
def test_attachments_without_dirs_are_off(tree: Path, dirs: Sequence[Path]) -> None:
    err = refused(
        lambda: resolve_attachments([str(tree / "mail/report.pdf")], dirs),
        "send_forbidden",
        "Attachments are off",
        "from nowhere",
        "do not propose enabling",
    )
    assert str(tree) not in err.message


@pytest.mark.parametrize(
    ("given", "code", "fragment"),
    [
        ("report.pdf", "invalid_input", "is relative; give an absolute path"),
        ("./mail/report.pdf", "invalid_input", "is relative"),
        ("~/report.pdf", "invalid_input", "is relative"),
        ("", "invalid_input", "is relative"),
        ("/srv/a\x00b", "invalid_input", "NUL or line break"),
        ("/srv/a\nb", "invalid_input", "NUL or line break"),
        ("/srv/a\rb", "invalid_input", "NUL or line break"),
    ],
    ids=["bare-name", "dot-relative", "tilde", "empty", "nul", "lf", "cr"],
)
def test_attachments_bad_path_strings(tree: Path, given: str, code: str, fragment: str) -> None:
    err = refused(lambda: resolve_attachments([given], [tree / "mail"]), code, fragment)
    assert "\x00" not in err.message and "\n" not in err.message


def test_attachments_relative_allowed_dir_never_counts(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tree)
    refused(
        lambda: resolve_attachments([str(tree / "mail/report.pdf")], [Path("mail")]),
        "send_forbidden",
        "outside the folders",
    )


@pytest.mark.parametrize("name", ["evil\nname.txt", "bell\x07.txt", "a\u2028b.txt"], ids=["lf", "bel", "u2028"])
def test_attachments_real_filename_must_be_header_safe(tree: Path, name: str) -> None:
    # The caller's path is clean; the symlink's target name is not.
    (tree / "mail" / name).write_text("x")
    (tree / "mail/clean.txt").symlink_to(tree / "mail" / name)
    refused(
        lambda: resolve_attachments([str(tree / "mail/clean.txt")], [tree / "mail"]),
        "invalid_input",
        "The attachment filename contains a line break or control character",
    )
