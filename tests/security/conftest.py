"""Security suite fixtures: canary passwords, a recording MCP client, the leak guard and the counts.

Every mailbox in this directory logs in with the canary app password. After every test the
`leak_guard` fixture scans what the process wrote to stdout and stderr, every log record, every
tool result the test received and the emulator's wire log and command log for the canary (plain,
whitespace-grouped and base64 as SMTP AUTH would carry it) and fails the test on a hit.
"""

from __future__ import annotations

import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from security_support import (
    ACCOUNTS,
    CANARY,
    CANARY_GROUPED,
    CLASSIFICATIONS,
    ME,
    Recorder,
    canary_forms,
)

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.server.lifetime import LOGOUT_GRACE_S
from support import gmail_env, load_runtime
from support.clients import clients

COUNTS = pytest.StashKey[Counter[str]]()


def _counts(config: pytest.Config) -> Counter[str]:
    found = config.stash.get(COUNTS, None)
    if found is None:
        found = Counter()
        config.stash[COUNTS] = found
    return found


@pytest.fixture
def counts(request: pytest.FixtureRequest) -> Counter[str]:
    """Tallies shown at the end of the run: hostile inputs, fault points, messages parsed."""
    return _counts(request.config)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Under pytest-xdist a worker hands its tallies to the controller, which prints the summary."""
    del exitstatus
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["security_counts"] = dict(_counts(session.config))


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    del error
    worker_counts = getattr(node, "workeroutput", {}).get("security_counts", {})
    _counts(node.config).update(worker_counts)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    del exitstatus
    tally = config.stash.get(COUNTS, None)
    if not tally:
        return
    terminalreporter.write_sep("=", "security suite counts")
    terminalreporter.write_line(f"hostile inputs checked:   {tally['hostile']}")
    terminalreporter.write_line(
        f"fault points injected:    {tally['fault']} "
        f"(IMAP {tally['fault_imap']}, SMTP {tally['fault_smtp']}, over {tally['fault_tools']} write-tool scenarios)"
    )
    if tally["fault"]:
        terminalreporter.write_line(
            f"  faulted calls: {tally['fault_success']} real successes, "
            f"{tally['fault_error_nothing_changed']} errors with nothing changed, "
            f"{tally['fault_error_may_have_changed']} errors saying the change may have happened"
        )
    terminalreporter.write_line(
        f"messages parsed:          {tally['parsed']} "
        f"(CPython corpus {tally['parsed_corpus']}, own malformed samples {tally['parsed_own']}, "
        f"hypothesis {tally['parsed_hypothesis']})"
    )
    terminalreporter.write_line(f"secret-leak scans:        {tally['leak_scans']} (canary never found)")


# ------------------------------------------------------------------ emulator and configuration


@pytest.fixture
def emulator(emulator_session: GmailEmulator) -> GmailEmulator:
    """A fresh emulator whose mailboxes all use the canary app password."""
    emulator_session.reset()
    for address in ACCOUNTS:
        emulator_session.add_account(address, CANARY)
    return emulator_session


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The allowed attachment folder, the download folder and an outside folder."""
    made = {
        "attach": tmp_path / "prilohy",
        "downloads": tmp_path / "stazene",
        "outside": tmp_path / "venku",
    }
    for path in made.values():
        path.mkdir()
    return made


@pytest.fixture
def make_runtime(emulator: GmailEmulator, tmp_path: Path, files: dict[str, Path]) -> Callable[..., Runtime]:
    """A runtime for mailbox "o" (osobni@example.cz) logging in with the canary (in its grouped form)."""

    def make(*, top: dict[str, Any] | None = None, **account: Any) -> Runtime:
        entry: dict[str, Any] = {
            "name": "o",
            "address": ME,
            "password": CANARY_GROUPED,
            "processed_label": "Asistent",
            "classification_labels": CLASSIFICATIONS,
            "can_send": True,
            "smtp_port": 465,
            "signatures": {"kratky": {"text": "J."}},
            "aliases": [{"address": "obchod@example.cz", "name": "Obchod"}],
            **account,
        }
        body: dict[str, Any] = {
            "accounts": [entry],
            "attachment_dirs": [str(files["attach"])],
            "download_dir": str(files["downloads"]),
            **(top or {}),
        }
        path = tmp_path / "multigmail.json"
        path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
        return load_runtime(path, gmail_env(emulator), state_dir=tmp_path / "state")

    return make


# ------------------------------------------------------------------ recording client and leak guard


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def call(recorder: Recorder) -> AsyncIterator[Callable[..., Any]]:
    """Tool calls recorded for the leak scan; a test's calls on one runtime share one in-process server
    and connection (tests/support/clients.py). Each waits for its LOGOUT as long as the server's own
    end of a connection would (LOGOUT_GRACE_S)."""
    async with clients() as open_clients:

        async def call(runtime: Runtime, tool: str, args: dict[str, Any]) -> Any:
            return recorder.keep(await open_clients.call(runtime, tool, args, settle_s=LOGOUT_GRACE_S))

        yield call


@pytest.fixture(autouse=True)
def leak_guard(
    recorder: Recorder,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    emulator_session: GmailEmulator,
    counts: Counter[str],
) -> Iterator[None]:
    caplog.set_level(logging.INFO)
    yield
    out, err = capfd.readouterr()
    sources: dict[str, str] = {
        "stdout": out,
        "stderr": err,
        "log records": caplog.text,
        "tool results": "\n".join(recorder.texts),
    }
    wire = emulator_session.wire_log()
    sources["emulator wire log"] = "\n".join(entry.data.decode("latin-1") for entry in wire)
    sources["emulator command log"] = "\n".join(c.line for c in emulator_session.commands())
    for where, text in sources.items():
        for form in canary_forms():
            assert form not in text, f"the canary app password ({form!r}) leaked into the {where}"
    counts["leak_scans"] += 1
