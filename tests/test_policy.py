"""Table-driven tests of the permission module, hostile inputs first."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from mcp_multi_gmail.policy import (
    ALLOWED_FLAGS,
    MAX_MESSAGE_BYTES,
    AllowedAttachment,
    check_can_send,
    check_count,
    check_flags,
    check_has_to,
    check_header_value,
    check_message_label,
    check_message_size,
    check_recipients,
    check_single_name,
    check_thread_label,
    imap_flag,
    resolve_attachments,
    resolve_sender,
)
from policy_refusals import refused

# --- can_send ------------------------------------------------------------------------------


def test_can_send_true_passes() -> None:
    check_can_send("work", True)


def test_can_send_false_refuses_without_suggesting_to_enable() -> None:
    err = refused(lambda: check_can_send("work", False), "send_forbidden", '"work"', "Nothing was sent")
    assert "enable it" not in err.message.lower()


# --- recipients ----------------------------------------------------------------------------

EXACT = ("a@partner.example",)
DOMAIN = ("@partner.example",)


@pytest.mark.parametrize(
    ("allowed", "recipients"),
    [
        (None, ["anyone@anywhere.example"]),
        (EXACT, ["a@partner.example"]),
        (EXACT, ["A@Partner.Example"]),
        (EXACT, ["  a@partner.example  "]),
        (DOMAIN, ["A@Partner.Example"]),
        (DOMAIN, ["b@partner.example", "c@PARTNER.example"]),
        (("  @Partner.Example ",), ["b@partner.example"]),
        (("x@other.example", "@partner.example"), ["x@other.example", "y@partner.example"]),
        (("@x",), ["a@x"]),
        (("@partner.example", "@x"), ["a@x", "b@partner.example"]),
    ],
    ids=[
        "none-means-anybody",
        "exact",
        "exact-case-insensitive",
        "exact-trimmed",
        "domain-case-insensitive",
        "domain-several",
        "domain-entry-trimmed-and-cased",
        "mixed-entries",
        "one-letter-domain",
        "two-domain-entries",
    ],
)
def test_recipients_allowed(allowed: Sequence[str] | None, recipients: list[str]) -> None:
    check_recipients("work", allowed, recipients)


@pytest.mark.parametrize(
    ("allowed", "recipients", "fragments"),
    [
        (DOMAIN, ["a@evil-partner.example"], ['"a@evil-partner.example"', '"@partner.example"']),
        (DOMAIN, ["a@sub.partner.example"], ['"a@sub.partner.example"']),
        (DOMAIN, ["a@partner.example.evil.com"], ['"a@partner.example.evil.com"']),
        (EXACT, ["b@partner.example"], ['"b@partner.example"']),
        (EXACT, ["xa@partner.example"], ['"xa@partner.example"']),
        (("partner.example",), ["a@partner.example"], ['"a@partner.example"']),
        (("@",), ["a@partner.example"], ['"a@partner.example"']),
        (("@", "@x"), ["a@partner.example"], ['"a@partner.example"']),
        (("@x",), ["a@xx", "a@x.example"], ['"a@xx", "a@x.example"']),
        (("@partner.example",), ["partner.example@evil.example"], ['"partner.example@evil.example"']),
        (
            EXACT,
            ["a@partner.example", "x@evil.com", "y@evil.com", "x@evil.com"],
            ['"x@evil.com", "y@evil.com".', "allows only"],
        ),
        ((), ["a@partner.example"], ["empty, which allows nobody"]),
        ([], ["a@partner.example"], ["empty, which allows nobody"]),
    ],
    ids=[
        "evil-prefixed-domain",
        "subdomain",
        "suffix-appended",
        "other-local-part",
        "exact-is-not-suffix",
        "entry-without-at-matches-nothing",
        "bare-at-entry-matches-nothing",
        "bare-at-beside-a-domain-matches-nothing-more",
        "one-letter-domain-is-not-a-prefix",
        "domain-as-local-part",
        "lists-every-refused-once",
        "empty-tuple-nobody",
        "empty-list-nobody",
    ],
)
def test_recipients_refused(allowed: Sequence[str], recipients: list[str], fragments: list[str]) -> None:
    err = refused(lambda: check_recipients("work", allowed, recipients), "send_forbidden", *fragments)
    assert "Nothing was sent" in err.message


def test_recipients_refusal_names_only_the_refused() -> None:
    err = refused(
        lambda: check_recipients("work", DOMAIN, ["a@partner.example", "x@evil.com"]),
        "send_forbidden",
        'may not write to "x@evil.com". Its allowed_recipients list allows only: "@partner.example".',
    )
    assert "a@partner.example" not in err.message.replace('"@partner.example"', "")


@pytest.mark.parametrize("to", [[], ["  "], ["", "\t"]])
def test_to_needs_an_address_even_with_cc_or_bcc(to: list[str]) -> None:
    refused(lambda: check_has_to(to, sending=True), "invalid_input", "at least one address in `to`", "Nothing was sent")
    refused(lambda: check_has_to(to, sending=False), "invalid_input", "Nothing was saved")
    check_has_to(["a@partner.example"], sending=True)


@pytest.mark.parametrize("allowed", [None, (), DOMAIN], ids=["anybody", "nobody", "domain"])
def test_recipients_empty_list_refused(allowed: Sequence[str] | None) -> None:
    refused(lambda: check_recipients("work", allowed, []), "send_forbidden", "no recipient", '"work"')


@pytest.mark.parametrize(
    "recipient",
    [
        '"a@partner.example" <x@evil>',
        "a@partner.example <x@evil.com>",
        "<a@partner.example>",
        "a@partner.example,x@evil.com",
        "x@evil.com;a@partner.example",
        "g: a@partner.example;",
        "a@partner.example\r\nBcc: x@evil.com",
        "a@partner.example\n",
        "\ra@partner.example",
        "a@partner.example\x00x@evil.com",
        "x@evil.com a@partner.example",
        "x@evil.com\ta@partner.example",
        "x@evil.com\u00a0@partner.example",
        "x@evil.com\u2028@partner.example",
        "x\u200b@partner.example",
        "x@evil.com(comment)@partner.example",
        "x@evil.com@partner.example",
        "@partner.example",
        "a@",
        "partner.example",
        "",
        "   ",
        '"quoted"@partner.example',
        "x\\@evil.com@partner.example",
        "@evil.com:a@partner.example",
        "a@partner.exampl\uff45",
        "a@\u212aartner.example",
        "a@partner.example.",
        "jiří@partner.example",
        "a@[192.0.2.1]",
        "a..b@partner.example",
    ],
    ids=[
        "display-name-spoof",
        "display-name-unquoted",
        "angle-brackets",
        "comma-joined",
        "semicolon-joined",
        "group-syntax",
        "crlf-header-injection",
        "trailing-lf",
        "leading-cr",
        "nul",
        "space-inside",
        "tab-inside",
        "nbsp-inside",
        "line-separator",
        "zero-width-space",
        "comment",
        "two-at-signs",
        "no-local-part",
        "no-domain",
        "no-at",
        "empty",
        "blank",
        "quoted-local-part",
        "backslash-escape",
        "source-route",
        "fullwidth-letter",
        "kelvin-sign",
        "trailing-dot",
        "non-ascii-local-part",
        "domain-literal",
        "double-dot",
    ],
)
@pytest.mark.parametrize("allowed", [None, DOMAIN], ids=["no-limit", "domain-rule"])
def test_recipients_not_plain_address(recipient: str, allowed: Sequence[str] | None) -> None:
    err = refused(
        lambda: check_recipients("work", allowed, ["ok@partner.example", recipient]),
        "invalid_input",
        "Not a plain e-mail address",
    )
    # The message never echoes raw control characters.
    assert "\r" not in err.message and "\n" not in err.message and "\x00" not in err.message
    assert "ok@partner.example" not in err.message


@pytest.mark.parametrize("count", [1, 99, 100])
@pytest.mark.parametrize("allowed", [None, DOMAIN], ids=["no-limit", "domain-rule"])
def test_recipients_up_to_gmails_100_are_allowed(count: int, allowed: Sequence[str] | None) -> None:
    # Gmail takes at most 100 recipients a message (to, cc and bcc together): 100 itself is fine.
    check_recipients("work", allowed, [f"r{i}@partner.example" for i in range(count)])


@pytest.mark.parametrize("count", [101, 150])
@pytest.mark.parametrize("allowed", [None, DOMAIN], ids=["no-limit", "domain-rule"])
def test_recipients_over_100_refused_before_anything_is_sent(count: int, allowed: Sequence[str] | None) -> None:
    err = refused(
        lambda: check_recipients("work", allowed, [f"r{i}@partner.example" for i in range(count)]),
        "invalid_input",
        f"{count} recipients (to, cc and bcc together) in one message; Gmail takes at most 100.",
        "Nothing was sent or saved.",
        "several messages of at most 100 each",
    )
    assert "r0@partner.example" not in err.message  # a count, never a list of 101 addresses


@pytest.mark.parametrize("count", [20, 21, 25])
def test_recipients_refusal_quotes_twenty_and_counts_the_rest(count: int) -> None:
    addresses = [f"x{i}@evil.example" for i in range(count)]
    err = refused(lambda: check_recipients("work", EXACT, addresses), "send_forbidden", '"x19@evil.example"')
    assert '"x20@evil.example"' not in err.message
    if count > 20:
        assert f'"x19@evil.example" and {count - 20} more.' in err.message
    else:
        assert " more" not in err.message


@pytest.mark.parametrize(
    ("call", "argument"),
    [
        (lambda: check_recipients("work", None, "a@partner.example"), "recipients"),
        (lambda: check_recipients("work", "a@partner.example", ["a@partner.example"]), "allowed"),
        (lambda: check_has_to("a@partner.example", sending=True), "to"),
        (lambda: resolve_attachments("/srv/mail/report.pdf", [Path("/srv/mail")]), "paths"),
    ],
    ids=["recipients", "allowed", "to", "paths"],
)
def test_bare_string_for_a_list_is_a_programming_error(call: Callable[[], object], argument: str) -> None:
    # Iterated, a str would be read one character at a time: the caller's bug is named, not guessed at.
    with pytest.raises(TypeError, match=f"^{argument} must be a sequence of strings, not a single string$"):
        call()


# --- sender / aliases ----------------------------------------------------------------------

ALIASES: list[tuple[str, str | None]] = [
    ("Info@Firm.example", 'Firm "Best" Ltd'),
    ("noname@firm.example", None),
    ("quotes@firm.example", '""'),
]


@pytest.mark.parametrize(
    ("from_alias", "expected"),
    [
        (None, ("me@firm.example", None)),
        ("", ("me@firm.example", None)),
        ("me@firm.example", ("me@firm.example", None)),
        (" ME@Firm.Example ", ("me@firm.example", None)),
        ("info@firm.example", ("Info@Firm.example", "Firm Best Ltd")),
        ("INFO@FIRM.EXAMPLE", ("Info@Firm.example", "Firm Best Ltd")),
        ("noname@firm.example", ("noname@firm.example", None)),
        ("quotes@firm.example", ("quotes@firm.example", None)),
    ],
    ids=[
        "absent",
        "empty",
        "account-itself",
        "account-case-and-spaces",
        "alias-exact-quotes-stripped",
        "alias-case-insensitive",
        "alias-without-name",
        "alias-name-only-quotes",
    ],
)
def test_resolve_sender(from_alias: str | None, expected: tuple[str, str | None]) -> None:
    assert resolve_sender("work", "me@firm.example", ALIASES, from_alias) == expected


@pytest.mark.parametrize(
    ("aliases", "from_alias", "fragments"),
    [
        (ALIASES, "boss@firm.example", ['"boss@firm.example"', "Its aliases are:", "Info@Firm.example"]),
        (ALIASES, "info@firm.example.evil", ["Its aliases are:"]),
        ([], "info@firm.example", ["has no aliases configured", "only as me@firm.example"]),
        ([], "me@firm.example\r\nBcc: x@evil", ["\\r\\n", "no aliases"]),
    ],
    ids=["unknown", "suffix-of-alias", "none-configured", "control-chars-escaped"],
)
def test_resolve_sender_refused(aliases: list[tuple[str, str | None]], from_alias: str, fragments: list[str]) -> None:
    err = refused(lambda: resolve_sender("work", "me@firm.example", aliases, from_alias), "send_forbidden", *fragments)
    assert "\r" not in err.message


def test_resolve_sender_refuses_broken_alias_name() -> None:
    refused(
        lambda: resolve_sender("work", "me@x.example", [("a@x.example", "A\r\nBcc: y")], "a@x.example"),
        "invalid_input",
        "The From display name contains a line break",
    )


def test_resolve_sender_refuses_broken_alias_address() -> None:
    refused(
        lambda: resolve_sender("work", "me@x.example", [("a\x07@x.example", "A")], "a\x07@x.example"),
        "invalid_input",
        "The From contains a line break or control character (U+0007)",
    )


def test_resolve_sender_refusal_lists_every_alias_with_its_name() -> None:
    refused(
        lambda: resolve_sender("work", "me@firm.example", ALIASES, "boss@firm.example"),
        "send_forbidden",
        'may not write as "boss@firm.example". Its aliases are: Info@Firm.example (Firm "Best" Ltd), '
        'noname@firm.example, quotes@firm.example (""). Nothing was sent.',
    )


# --- header values -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["Hello", "Re: čeká na vás", "tab\tinside", "", "\t"])
def test_header_value_allowed(value: str) -> None:
    check_header_value("subject", value)


@pytest.mark.parametrize(
    ("value", "described"),
    [
        ("Hi\r\nBcc: x@evil.com", "CR (U+000D), LF (U+000A)"),
        ("Hi\nBcc: x@evil.com", "LF (U+000A)"),
        ("Hi\rthere", "CR (U+000D)"),
        ("Hi\x00", "NUL (U+0000)"),
        ("bell\x07", "U+0007"),
        ("esc\x1b[31m", "U+001B"),
        ("del\x7f", "U+007F"),
        ("nel\x85", "U+0085"),
        ("line\u2028sep", "U+2028"),
        ("para\u2029sep", "U+2029"),
        ("vt\x0bff\x0c", "U+000B, U+000C"),
    ],
)
def test_header_value_refused(value: str, described: str) -> None:
    refused(lambda: check_header_value("subject", value), "invalid_input", "The subject", described)


# --- attachments ---------------------------------------------------------------------------


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


# --- labels --------------------------------------------------------------------------------

PROCESSED = "asistent/Zpracováno"
CLASSES = {"asistent/čeká": "waiting for someone", "asistent/faktury": "invoices", "Urgent": "now"}


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("asistent/Zpracováno", PROCESSED),
        ("ASISTENT/ZPRACOVÁNO", PROCESSED),
        ("  asistent/zpracováno \t", PROCESSED),
        (unicodedata.normalize("NFD", "asistent/zpracováno"), PROCESSED),
    ],
    ids=["exact", "upper", "trimmed", "nfd"],
)
def test_message_label_allowed(label: str, expected: str) -> None:
    assert check_message_label("work", label, PROCESSED, CLASSES) == expected


def test_message_label_returns_configured_spelling_for_upper_case() -> None:
    assert check_message_label("work", "PROCESSED", "processed", {}) == "processed"


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("asistent/čeká", "asistent/čeká"),
        ("ASISTENT/ČEKÁ", "asistent/čeká"),
        (unicodedata.normalize("NFD", "asistent/čeká"), "asistent/čeká"),
        (" urgent ", "Urgent"),
    ],
    ids=["exact", "upper", "nfd-spelling", "trimmed-case"],
)
def test_thread_label_allowed(label: str, expected: str) -> None:
    assert check_thread_label("work", label, PROCESSED, CLASSES) == expected


def test_thread_label_configured_in_nfd_matches_nfc_input() -> None:
    nfd = unicodedata.normalize("NFD", "čeká")
    assert check_thread_label("work", "čeká", None, {nfd: "waiting"}) == nfd


LabelCheck = Callable[[str, str, "str | None", dict[str, str]], str]
BOTH: list[LabelCheck] = [check_message_label, check_thread_label]


@pytest.mark.parametrize("check", BOTH, ids=["message", "thread"])
@pytest.mark.parametrize(
    ("label", "code", "fragment"),
    [
        ("", "invalid_input", "empty label"),
        ("   ", "invalid_input", "empty label"),
        ("\t", "invalid_input", "empty label"),
        ("asistent/čeká\r\nX", "invalid_input", "line break or control"),
        ("Urgent\n", "invalid_input", "line break or control"),
        ("Urg\x00ent", "invalid_input", "line break or control"),
        ("\\Inbox", "label_forbidden", "Gmail's own labels"),
        ("\\\\Inbox", "label_forbidden", "Gmail's own labels"),
        ("\\Trash", "label_forbidden", "Gmail's own labels"),
        (" \\Starred", "label_forbidden", "Gmail's own labels"),
        ("\\Important", "label_forbidden", "archiving, starring or deleting"),
        ("Private", "label_forbidden", "neither applied nor removed"),
        ("asistent", "label_forbidden", 'not configured for mailbox "work"'),
        ("asistent/zpracováno/x", "label_forbidden", "user's own"),
    ],
    ids=[
        "empty",
        "blank",
        "tab-only",
        "crlf",
        "trailing-lf",
        "nul",
        "inbox",
        "double-backslash-inbox",
        "trash",
        "spaced-system-label",
        "important",
        "user-label",
        "parent-of-nested",
        "child-of-processed",
    ],
)
def test_label_refused_by_both(check: LabelCheck, label: str, code: str, fragment: str) -> None:
    err = refused(lambda: check("work", label, PROCESSED, CLASSES), code, fragment)
    assert "\r" not in err.message and "\x00" not in err.message


def test_message_label_refuses_classification() -> None:
    refused(
        lambda: check_message_label("work", "Asistent/Čeká", PROCESSED, CLASSES),
        "label_forbidden",
        "is a classification",
        "mg_label_thread",
    )


@pytest.mark.parametrize("label", [PROCESSED, "Asistent/zpracováno", " ASISTENT/ZPRACOVÁNO "])
def test_thread_label_refuses_processed_label(label: str) -> None:
    refused(
        lambda: check_thread_label("work", label, PROCESSED, CLASSES),
        "label_forbidden",
        "processed label",
        "replies that arrive later",
        "tomorrow's reply would look already processed",
        "mg_label_message",
    )


def test_thread_label_refuses_processed_in_other_case() -> None:
    refused(
        lambda: check_thread_label("work", "Processed", "processed", {"waiting": "w"}),
        "label_forbidden",
        "later",
    )


@pytest.mark.parametrize(
    "label",
    [
        "\u0430sistent/čeká",  # Cyrillic а for Latin a
        "asistent/\u010dek\u0430\u0301",  # Cyrillic а + combining acute in place of á
        "Urgent\u200b",  # zero-width space
        "Ｕrgent",  # fullwidth U: NFKC would fold it, NFC does not
        "asistent／čeká",  # fullwidth solidus
    ],
    ids=["cyrillic-a", "cyrillic-a-acute", "zero-width", "fullwidth-letter", "fullwidth-slash"],
)
def test_thread_label_refuses_look_alikes(label: str) -> None:
    refused(lambda: check_thread_label("work", label, PROCESSED, CLASSES), "label_forbidden", "not configured")


@pytest.mark.parametrize(
    ("configured", "same", "other"),
    [
        ("asistent/faktury", "ASISTENT/Faktury", "ASıSTENT/FAKTURY"),
        ("Straße", "STRAßE", "STRASSE"),
        ("Straße", "STRA\u1e9eE", "strasse"),
    ],
    ids=["dotless-i", "sharp-s-upper", "capital-sharp-s"],
)
def test_label_case_folding_keeps_other_letters_apart(configured: str, same: str, other: str) -> None:
    # Only case is ignored: ı is not i, and ß is not ss, though their capitals are the same.
    assert check_thread_label("work", same, None, {configured: "x"}) == configured
    refused(lambda: check_thread_label("work", other, None, {configured: "x"}), "label_forbidden", "not configured")


def test_message_label_refuses_look_alike_of_processed() -> None:
    refused(
        lambda: check_message_label("work", "\u0430sistent/zpracováno", PROCESSED, CLASSES),
        "label_forbidden",
        "not configured",
    )


@pytest.mark.parametrize(
    ("check", "processed", "classes", "listed"),
    [
        (check_message_label, PROCESSED, CLASSES, f'On a message these tools take only: "{PROCESSED}"'),
        (check_message_label, None, CLASSES, "On a message these tools take only: (none configured)"),
        (check_thread_label, PROCESSED, {}, "On a thread these tools take only: (none configured)"),
        (
            check_thread_label,
            PROCESSED,
            CLASSES,
            'On a thread these tools take only: "asistent/čeká", "asistent/faktury", "Urgent"',
        ),
    ],
    ids=["message-lists-processed", "message-none", "thread-none", "thread-lists-classes"],
)
def test_label_refusal_lists_what_the_tool_takes(
    check: LabelCheck, processed: str | None, classes: dict[str, str], listed: str
) -> None:
    refused(
        lambda: check("work", "Private", processed, classes),
        "label_forbidden",
        listed,
        "classification_labels",
        "mg_reload_config",
    )


def test_message_label_with_labelling_off_refuses_former_processed_name() -> None:
    refused(lambda: check_message_label("work", "processed", None, {}), "label_forbidden", "(none configured)")


# --- flags ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((True, None, None), {"seen": True}),
        ((None, False, None), {"flagged": False}),
        ((None, None, True), {"answered": True}),
        ((False, True, False), {"seen": False, "flagged": True, "answered": False}),
    ],
)
def test_check_flags(args: tuple[bool | None, bool | None, bool | None], expected: dict[str, bool]) -> None:
    assert check_flags(*args) == expected


def test_check_flags_none_asked() -> None:
    refused(lambda: check_flags(None, None, None), "invalid_input", "No flag was asked for", "seen, flagged")


@pytest.mark.parametrize(("name", "flag"), [("seen", "\\Seen"), ("flagged", "\\Flagged"), ("answered", "\\Answered")])
def test_imap_flag(name: str, flag: str) -> None:
    assert name in ALLOWED_FLAGS
    assert imap_flag(name) == flag


@pytest.mark.parametrize("name", ["deleted", "draft", "Seen", "\\Seen", ""])
def test_imap_flag_closed_set(name: str) -> None:
    refused(lambda: imap_flag(name), "invalid_input", "only seen, flagged, answered")


# --- size ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, MAX_MESSAGE_BYTES - 1, MAX_MESSAGE_BYTES])
def test_size_within_limit(size: int) -> None:
    check_message_size(size, 3)


@pytest.mark.parametrize(
    ("size", "attachments", "fragments", "absent"),
    [
        (MAX_MESSAGE_BYTES + 1, 0, ["is 25.1 MB, over the 25.0 MB Gmail accepts. Nothing was sent or saved."], "third"),
        (MAX_MESSAGE_BYTES + 1, 2, ["is 25.1 MB", "2 attachment(s)", "about a third larger"], None),
        (30 * 1024 * 1024, 1, ["is 30.0 MB", "1 attachment(s)"], None),
        (int(31.25 * 1024 * 1024), 0, ["is 31.3 MB"], "attachment"),
    ],
    ids=["one-byte-over", "over-with-attachments", "thirty-mb", "rounds-up"],
)
def test_size_over_limit(size: int, attachments: int, fragments: list[str], absent: str | None) -> None:
    err = refused(lambda: check_message_size(size, attachments), "send_forbidden", *fragments)
    if absent:
        assert absent not in err.message
