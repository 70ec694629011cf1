"""Parsing robustness: mail written by strangers never crashes the read tools.

Every message of CPython's own email test corpus (Lib/test/test_email/data/msg_*.txt of the
installed Python, when it ships the test package) plus the malformed messages in data/ are
delivered into the emulator and read through mg_get_thread, mg_get_message and every attachment
through mg_get_attachment. A hypothesis property generates malformed MIME (bad charsets, broken
boundaries, huge headers, nested message/rfc822, missing Content-Type, junk transfer encodings)
with the same guarantee: every call answers, none is an unexpected failure, saved attachments stay
inside the download folder.
"""

from __future__ import annotations

import importlib
import os
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from security_support import ACCOUNTS, CANARY, ME, Recorder, error_of

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.mail.core import inputs
from mcp_multi_gmail.runtime import Runtime

OWN_DATA = Path(__file__).parent / "data"


def _cpython_corpus() -> list[Path]:
    try:
        corpus_package = importlib.import_module("test.test_email")  # optional in a Python install
    except ImportError:
        return []
    return sorted((Path(os.path.dirname(corpus_package.__file__ or "")) / "data").glob("msg_*.txt"))


CORPUS = [*_cpython_corpus(), *sorted(OWN_DATA.glob("msg_*.txt"))]
_MESSAGE_ID_LINE = re.compile(rb"^message-id:[ \t]*(.*)$", re.IGNORECASE | re.MULTILINE)


def _crlf(raw: bytes) -> bytes:
    return re.sub(rb"\r?\n", b"\r\n", raw)


def _with_message_id(raw: bytes, fallback: str) -> tuple[bytes, str]:
    """The message and the Message-ID to read it by: its own when that is one usable id, else
    `fallback` put in front of its headers (the corpus holds messages with none, or several).
    An mbox `From ` line in front is dropped: it is mbox framing, which a mailbox never holds
    (and before which Gmail reads no header field: the emulator's BEHAVIOURS.md, header end)."""
    if raw.startswith(b"From "):
        raw = raw.split(b"\n", 1)[1] if b"\n" in raw else b""
    head = raw.split(b"\n\n", 1)[0]
    found = _MESSAGE_ID_LINE.findall(head)
    if len(found) == 1:
        candidate = found[0].decode("ascii", "replace").strip()
        try:
            bare = inputs.message_id(candidate)
        except MailError:  # the tool refuses it the same way; anything else is a bug to see
            bare = ""
        if bare and bare.isascii() and "<" not in bare and ">" not in bare and bare != fallback:
            return raw, bare
    return b"Message-ID: <" + fallback.encode() + b">\n" + raw, fallback


def _unexpected(result: Any) -> str | None:
    """A description of a crash (an unexpected failure), or None."""
    error = error_of(result)
    if error is None:
        return None
    if "Unexpected failure" in error["message"] or "Internal error" in error["message"]:
        return f"{error['code']}: {error['message'][:300]}"
    return None


async def read_everything(
    recorder: Recorder, runtime: Runtime, emulator: GmailEmulator, raw: bytes, message_id: str
) -> list[str]:
    """Deliver `raw` and read it through the three tools; returns the problems found."""
    info = emulator.deliver(ME, raw)
    downloads = runtime.config.download_dir.resolve()
    problems: list[str] = []
    async with recorder.session(runtime) as call:
        thread = await call("mg_get_thread", {"account": "o", "thread_id": str(info.thrid)})
        if thread.is_error:
            problems.append(f"mg_get_thread failed: {thread.content[0].text[:300]}")
        message = await call("mg_get_message", {"account": "o", "message_id": message_id, "max_body_length": 30_000})
        if message.is_error:
            problems.append(f"mg_get_message failed: {message.content[0].text[:300]}")
            return problems
        data = message.structured_content
        if data["body"] is not None and data["body_total_length"] > 0:
            window = await call(
                "mg_get_message",
                {"account": "o", "message_id": message_id, "body_offset": data["body_total_length"] // 2},
            )
            if window.is_error:
                problems.append(f"a body window failed: {window.content[0].text[:300]}")
        for attachment in data["attachments"]:
            saved = await call(
                "mg_get_attachment",
                {"account": "o", "message_id": message_id, "attachment_id": attachment["attachment_id"]},
            )
            crash = _unexpected(saved)
            if crash:
                problems.append(f"mg_get_attachment {attachment['attachment_id']}: {crash}")
            elif not saved.is_error:
                path = Path(saved.structured_content["path"])
                if path.parent != downloads or not path.is_file() or path.is_symlink():
                    problems.append(f"attachment saved outside the download folder: {path}")
    return problems


@pytest.mark.anyio
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
async def test_corpus_message_reads_without_a_crash(
    path: Path,
    emulator: GmailEmulator,
    make_runtime: Callable[..., Runtime],
    recorder: Recorder,
    counts: Counter[str],
) -> None:
    raw, message_id = _with_message_id(path.read_bytes(), f"corpus-{path.stem}@security.test")
    problems = await read_everything(recorder, make_runtime(), emulator, _crlf(raw), message_id)
    assert not problems, "\n".join(problems)
    counts["parsed"] += 1
    counts["parsed_own" if path.parent == OWN_DATA else "parsed_corpus"] += 1


def test_the_corpus_is_there() -> None:
    assert len(CORPUS) >= 5


# ------------------------------------------------------------------ hypothesis: malformed MIME

_CHARSETS = st.sampled_from(
    [
        "utf-8",
        "UTF-8",
        "iso-8859-2",
        "windows-1250",
        "utf-7",
        "utf-16",
        "x-unknown",
        "",
        '"',
        "utf-8*cs",
        "base64",
        "punycode",
        "idna",
        "unicode-escape",
        "rot13",
        "zlib",
        "hex",
        "cp1252'cs'",
        "\u010d",
    ]
)
_ENCODINGS = st.sampled_from(["7bit", "8bit", "binary", "base64", "quoted-printable", "x-uuencode", "BASE64 junk", ""])
_TEXT_TYPES = st.sampled_from(["text/plain", "text/html", "text/enriched", "TEXT/PLAIN", "text", "text/", "/plain"])
_ATTACHMENT_TYPES = st.sampled_from(
    ["application/pdf", "image/png", "application/octet-stream", "multipart/mixed", "message/rfc822", "x/y/z", "?"]
)
_JUNK = st.binary(max_size=300)
_WORDS = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60)


def _header_value(text: str) -> bytes:
    return text.replace("\r", " ").replace("\n", " ").encode("utf-8", "replace")


@st.composite
def _filename(draw: st.DrawFn) -> bytes:
    name = draw(
        st.one_of(
            _WORDS,
            st.sampled_from(["../../venku/evil.sh", "/etc/passwd", "..", "CON.txt", "a\u202egpj.exe", "%2e%2e%2fx"]),
        )
    )
    form = draw(st.sampled_from(["plain", "rfc2231", "rfc2047", "broken"]))
    value = _header_value(name)
    if form == "rfc2231":
        return b"filename*=utf-8''" + re.sub(rb"[^A-Za-z0-9._-]", lambda m: b"%%%02X" % m.group(0)[0], value)
    if form == "rfc2047":
        return b'filename="=?utf-8?Q?' + value.replace(b" ", b"_").replace(b"?", b"=3F") + b'?="'
    if form == "broken":
        return b"filename*0*=x'y'%ZZ; filename*1=" + value
    return b'filename="' + value.replace(b'"', b"") + b'"'


@st.composite
def _leaf(draw: st.DrawFn) -> bytes:
    headers: list[bytes] = []
    if draw(st.booleans()):  # a leaf without Content-Type is text/plain us-ascii by default
        kind = draw(st.one_of(_TEXT_TYPES, _ATTACHMENT_TYPES))
        headers.append(b"Content-Type: " + kind.encode() + b"; charset=" + draw(_CHARSETS).encode("utf-8"))
    if draw(st.booleans()):
        headers.append(b"Content-Transfer-Encoding: " + draw(_ENCODINGS).encode())
    if draw(st.booleans()):
        disposition = draw(st.sampled_from(["attachment", "inline", "ATTACHMENT", "form-data", ""]))
        headers.append(b"Content-Disposition: " + disposition.encode() + b"; " + draw(_filename()))
    body = draw(st.one_of(_JUNK, _WORDS.map(lambda t: t.encode("utf-8")), st.just(b"=ZZ=4=\r\n!!!====")))
    return b"\r\n".join(headers) + b"\r\n\r\n" + body


@st.composite
def _entity(draw: st.DrawFn, depth: int = 0) -> bytes:
    shape = draw(st.sampled_from(["leaf", "multipart", "rfc822"] if depth < 3 else ["leaf"]))
    if shape == "leaf":
        return draw(_leaf())
    if shape == "rfc822":
        inner = draw(_entity(depth + 1))
        return b"Content-Type: message/rfc822\r\n\r\nSubject: inner\r\nFrom: x@example.org\r\n" + inner
    boundary = draw(st.sampled_from(["b", "=_ab", "", "a b", "x" * 80, '"quoted"']))
    children = draw(st.lists(_entity(depth + 1), max_size=3))
    broken = draw(st.sampled_from(["fine", "no-close", "wrong-boundary", "no-parts", "garbage-preamble"]))
    used = "zzz" if broken == "wrong-boundary" else boundary.strip('"')
    parts = [b"--" + used.encode() + b"\r\n" + child for child in children]
    body = b"\r\n".join(parts)
    if broken != "no-close":
        body += b"\r\n--" + used.encode() + b"--\r\n"
    if broken == "no-parts":
        body = b"no parts here\r\n"
    if broken == "garbage-preamble":
        body = draw(_JUNK) + b"\r\n" + body
    subtype = draw(st.sampled_from(["mixed", "alternative", "related", "signed", "digest", ""]))
    return b"Content-Type: multipart/" + subtype.encode() + b"; boundary=" + boundary.encode() + b"\r\n\r\n" + body


@st.composite
def malformed_messages(draw: st.DrawFn) -> bytes:
    headers = [
        b"From: " + draw(st.sampled_from([b"Jan <jan@example.org>", b"", b"<>", b"@@@", b"=?utf-8?B?!!!?= <a@b>"])),
        b"To: " + ME.encode(),
        b"Subject: "
        + draw(
            st.one_of(
                _WORDS.map(_header_value),
                st.just(b"=?x-unknown?Q?=FF=FE?= =?utf-8?B?????="),
                st.integers(1_000, 60_000).map(lambda n: b"A" * n),
            )
        ),
        b"Date: " + draw(st.sampled_from([b"Mon, 28 Sep 2026 14:05:00 +0200", b"yesterday", b"", b"31 Feb 99999"])),
        b"MIME-Version: 1.0",
    ]
    if draw(st.booleans()):
        headers.append(b"X-Many: x\r\n" * draw(st.integers(1, 300)) + b"X-End: y")
    if draw(st.booleans()):
        headers.append(b"Authentication-Results: mx.google.com; " + draw(_JUNK).replace(b"\r", b"").replace(b"\n", b""))
    entity = draw(_entity())
    return b"\r\n".join(headers) + b"\r\n" + entity


@pytest.fixture
def reader_runtime(make_runtime: Callable[..., Runtime]) -> Runtime:
    """One runtime for every generated example (fixtures are set up once per hypothesis test)."""
    return make_runtime()


@settings(
    max_examples=int(os.environ.get("SECURITY_MIME_EXAMPLES", "50")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(raw=malformed_messages())
def test_malformed_mime_reads_without_a_crash(
    raw: bytes,
    emulator: GmailEmulator,
    reader_runtime: Runtime,
    recorder: Recorder,
    counts: Counter[str],
) -> None:
    emulator.reset()
    for address in ACCOUNTS:
        emulator.add_account(address, CANARY)
    raw = b"Message-ID: <hypothesis@security.test>\r\n" + raw
    runtime = reader_runtime

    async def run() -> list[str]:
        return await read_everything(recorder, runtime, emulator, raw, "hypothesis@security.test")

    problems = anyio.run(run)
    assert not problems, "\n".join(problems)
    counts["parsed"] += 1
    counts["parsed_hypothesis"] += 1
