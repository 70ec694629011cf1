"""The date forms `since` (tools) and `--since` (watcher) read: ISO 8601, RFC 2822, and the looser
forms 1.5.0 took through JavaScript's Date parsing (docs/en/moving-from-1.5.0.md). Without a zone
a value is UTC. One table, both paths; anything else is refused and the refusal lists the forms.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from toolcalls import Call, error, ok

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.mail.core.inputs import ACCEPTED_FORMS, since
from mcp_multi_gmail.runtime import Runtime
from mcp_multi_gmail.watch.args import WatchArgs, plan_watch
from mcp_multi_gmail.watch.loop import run_watcher
from mcp_multi_gmail.watch.state import OWNER_FILE
from support import gmail_env

pytestmark = pytest.mark.anyio

MIDNIGHT = "2026-09-30T00:00:00Z"
AT_TWO = "2026-09-30T14:00:00Z"
# form → the boundary it names (UTC)
ACCEPTED = {
    "2026-09-30": MIDNIGHT,
    "2026-09-30 14:00": AT_TWO,
    "2026-09-30T14:00:00+02:00": "2026-09-30T12:00:00Z",
    "2026/09/30": MIDNIGHT,
    "2026/9/3": "2026-09-03T00:00:00Z",
    "2026/09/30 14:00": AT_TWO,
    "2026/09/30 14:00:05": "2026-09-30T14:00:05Z",
    "2026/09/30 14:00 UTC": AT_TWO,
    "Sep 30 2026": MIDNIGHT,
    "sep 30 2026": MIDNIGHT,
    "Sep 30, 2026": MIDNIGHT,
    "September 30 2026": MIDNIGHT,
    "Sep 30 2026 14:00": AT_TWO,
    "Sep 30 2026 14:00:05": "2026-09-30T14:00:05Z",
    "Sep 30 2026 14:00 +0200": "2026-09-30T12:00:00Z",
    # JavaScript's Date.toString(), as a 1.5.0 note may hold it
    "Wed Sep 30 2026 14:00:00 GMT+0200 (Central European Summer Time)": "2026-09-30T12:00:00Z",
    "30 Sep 2026": MIDNIGHT,
    "30 September 2026": MIDNIGHT,
    "30 Sep 2026 14:00": AT_TWO,
    "30 Sep 2026 14:00:05": "2026-09-30T14:00:05Z",
    "Wed, 30 Sep 2026 14:00:00 +0200": "2026-09-30T12:00:00Z",
}
REFUSED = [
    "30/09/2026",  # day first with slashes: 1.5.0 would have read it as month 30
    "09/30/2026",
    "30.9.2026",
    "2026/13/01",
    "2026/09/31",
    "Sep 31 2026",
    "Foo 30 2026",
    "30 Sep 26",
    "Sep 30 2026 25:00",
    "Sep 30 2026 14",
    "30 Sep 2026 14:00 CET",  # a named zone other than UTC/GMT would be a guess
    "Tue, 30 Sep 2026 14:00 (CEST)",  # a zone only in a comment: it would be read as UTC
    "Sep 30 2026 14:00 (CEST)",
    "2026-09-30T14",
    "včera",
    "zítra 8:00",
]


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_every_accepted_form_is_in_the_table_and_the_message() -> None:
    assert set(ACCEPTED_FORMS) <= set(ACCEPTED)
    for form, boundary in ACCEPTED.items():
        assert iso(since(form)) == boundary, form
        assert iso(since(f"  {form} ")) == boundary, form
    for form in REFUSED:
        with pytest.raises(MailError) as refused:
            since(form)
        assert refused.value.code == "invalid_input"


async def test_tools_read_the_table(demo: Runtime, call: Call) -> None:
    for form, boundary in ACCEPTED.items():
        data = await ok(call, demo, "mg_next_pass", account="osobni", since=form, max_threads=1)
        assert data["since"] == boundary, form


async def test_tools_refuse_the_rest_listing_the_forms(demo: Runtime, call: Call) -> None:
    for form in REFUSED:
        body = await error(call, demo, "mg_next_pass", account="osobni", since=form)
        assert body["code"] == "invalid_input", form
        assert body["message"].startswith(f'"{form}" is not a date this server can read. Accepted forms: '), form
        assert all(f'"{accepted}"' in body["message"] for accepted in ACCEPTED_FORMS), body["message"]
        assert "without a zone is UTC" in body["message"]
    labelled = await error(
        call, demo, "mg_label_message", account="osobni", message_ids=["a@b"], label="Asistent", since="x"
    )
    assert labelled["code"] == "invalid_input" and "Accepted forms" in labelled["message"]


def watch_args(config: Path, emulator: GmailEmulator, anchor: str) -> WatchArgs:
    return WatchArgs(
        config_path=config,
        since=[f"osobni={anchor}"],
        interval=None,
        max_time=None,
        hours=None,
        layout=None,
        environ=gmail_env(emulator),
    )


@pytest.fixture
def watch_config(write_config: Callable[..., Path]) -> Path:
    return write_config([{"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}])


def test_watcher_reads_the_table(watch_config: Path, emulator: GmailEmulator) -> None:
    for form, boundary in ACCEPTED.items():
        plan = plan_watch(watch_args(watch_config, emulator, form))
        assert iso(plan.watched["osobni"]) == boundary, form


def test_watcher_refuses_the_rest_with_exit_6_listing_the_forms(
    watch_config: Path, emulator: GmailEmulator, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for form in REFUSED:
        code = run_watcher(watch_args(watch_config, emulator, form), state_dir=tmp_path)
        out = capsys.readouterr().out
        assert code == 6, form
        assert out.startswith(f"chyba: kotva „{form}“ u schránky osobni není datum (čeká se jeden z tvarů "), out
        assert out.count("\n") == 1 and "; " not in out  # one problem, one line
        assert all(f"„{accepted}“" in out for accepted in ACCEPTED_FORMS), out
        assert "čas bez pásma je UTC" in out
    assert not (tmp_path / OWNER_FILE).exists()
