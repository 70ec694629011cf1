"""The demo: the guided tour end to end, and `--demo` serving MCP over stdio on the sample mailboxes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from mcp_multi_gmail.demo import setup
from mcp_multi_gmail.demo.serve import serve_demo
from mcp_multi_gmail.demo.tour import Tour, pick_language, tour
from support import INITIALIZED, SERVER_SCRIPT, initialize_request

SCRIPT = SERVER_SCRIPT
SERVER = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "mcp_multi_gmail"]
TIMEOUT = 300


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MG_") and k != "LANG"}
    env["PYTHONIOENCODING"] = "utf-8"
    env.update(extra)
    return env


def run_tour(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mcp_multi_gmail", "demo", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=TIMEOUT,
    )
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert done.returncode == 0, f"stdout:\n{out}\nstderr:\n{err}"
    return out


def assert_in_order(text: str, markers: list[str]) -> None:
    position = 0
    for marker in markers:
        found = text.find(marker, position)
        assert found >= 0, f"{marker!r} missing (after position {position}) in:\n{text}"
        position = found + len(marker)


def assert_compact(out: str) -> None:
    assert '{"' not in out and "structured" not in out  # no raw JSON walls
    assert len(out.splitlines()) < 75  # nine steps, the ninth (follow-ups) in three lines


# ------------------------------------------------------------------ the tour


def test_tour_in_czech() -> None:
    out = run_tour([], clean_env(LANG="cs_CZ.UTF-8"))
    assert_in_order(
        out,
        [
            "1) Schránky",
            "osobni",
            "jana.novakova@example.cz",
            "tym@example.com",
            "upozorneni@example.com",
            "Přihlášení ověřeno",
            "2) Průchod – mg_next_pass",
            "Chata na Vysočině",
            "Lucie Dvořáková",
            "nové 1 z 9",
            "Asistent/akce",
            "Jana Nováková (odesláno)",
            "koncepty 1, naplánované 1",
            "window_clear: false",
            "3) Celé vlákno – mg_get_thread",
            "vlákno jich má 9",
            "víc zpráv, než průchod ukázal",
            "4) Označit jako zpracované – mg_label_message",
            "10 zpráv",
            "selhalo 0",
            "window_clear: true",
            "5) Průchod znovu",
            "0 vláken s prací, window_clear: true",
            '6) Hledání ve všech schránkách – mg_search_threads (account: "all", newer_than:2d)',
            "osobni",
            "tym",
            "automaty",
            "7) Nová pošta v konverzaci – hlídač --follow",
            "Doručeno „Objednávka dřeva na chatu“",
            "» nová pošta: osobni 1. Projdi ji průchodem (mg_next_pass); hlídač běží dál",
            "Hlídač zastaven (SIGTERM",
            "8) Pozvánka na schůzku – mg_get_message",
            "„Plánování letní akce“",
            "14:00–15:00 (Europe/Prague), Knihovna",
            "Pořadatelka Lucie Dvořáková; odpověď této schránky: NEEDS-ACTION",
            "jen na pokyn uživatele",
            "9) Odpovědi, na které se čeká – mg_awaiting_replies",
            "Re: Vánoce u nás? · Marie Nováková · 7 dní čekání",
            "auto_reply_came: true",
            "Připomínky/",
            "reminders_due",
            "čekání skončilo",
            "claude mcp add multigmail-demo -- uv run --project",
            "mcp-multi-gmail --demo",
            "README.md",
        ],
    )
    assert_compact(out)


def test_tour_in_english() -> None:
    out = run_tour(["--lang", "en"], clean_env(LANG="cs_CZ.UTF-8"))
    assert_in_order(
        out,
        [
            "1) Mailboxes",
            "jana.novakova@example.cz",
            "Logins verified",
            "2) The pass – mg_next_pass",
            "Chata na Vysočině",
            "1 new of 9",
            "window_clear: false",
            "3) The whole thread – mg_get_thread",
            "more messages than shown",
            "4) Mark as processed – mg_label_message",
            "failed 0",
            "window_clear: true",
            "5) The pass again",
            "0 threads with work, window_clear: true",
            '6) Search across every mailbox – mg_search_threads (account: "all"',
            "automaty",
            "7) New mail in the conversation – the --follow watcher",
            "» nová pošta: osobni 1.",
            "Watcher stopped (SIGTERM",
            "8) A meeting invitation – mg_get_message",
            "“Planning the summer event”",
            "14:00–15:00 (Europe/Prague), Knihovna",
            "Organizer Lucie Dvořáková; this mailbox's answer: NEEDS-ACTION",
            "9) Replies the user is waiting for – mg_awaiting_replies",
            "auto_reply_came: true",
            "ended the wait",
            "claude mcp add multigmail-demo -- uv run --project",
            "README",
        ],
    )
    assert "Schránky" not in out and "Průchod" not in out
    assert out.count("Objednávka dřeva") == 1  # the delivery is named once; the watcher's line never names it
    assert_compact(out)


def test_language_choice() -> None:
    assert pick_language(None, {}) == "cs"
    assert pick_language(None, {"LANG": "en_GB.UTF-8"}) == "en"
    assert pick_language(None, {"LANG": "cs_CZ.UTF-8"}) == "cs"
    assert pick_language("cs", {"LANG": "en_US.UTF-8"}) == "cs"
    assert pick_language("en", {"LANG": "cs_CZ.UTF-8"}) == "en"


def test_without_dev_packages(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # A --no-dev install lacks trustme / aiosmtpd: a clear Czech line, exit 1, nothing on stdout.
    monkeypatch.setitem(sys.modules, "trustme", None)
    assert serve_demo() == 1
    assert tour("cs") == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("chyba: ukázka potřebuje vývojové balíčky (chybí modul trustme)") == 2


# ------------------------------------------------------------------ --demo over stdio


def days_ago(days: int) -> str:
    return (datetime.now(UTC) - timedelta(days=days)).date().isoformat()


@pytest.mark.anyio
async def test_demo_server_with_sdk_client() -> None:
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], "--demo"], env=clean_env())
    # (the SDK client closes stdin on exit; the EOF cleanup is checked by the raw test below)
    async with Client(params) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert len(tools) == 24 and {"mg_next_pass", "mg_label_message", "mg_search_threads"} <= tools
        result = await client.call_tool("mg_next_pass", {"account": "osobni", "since": days_ago(5)})
        assert result.is_error is False and result.structured_content is not None
        threads = result.structured_content["threads"]
        assert len(threads) == 9 and result.structured_content["window_clear"] is False
        assert any(t["subject"].startswith("Chata na Vysočině") and t["message_count"] == 9 for t in threads)
        accounts = await client.call_tool("mg_list_accounts", {"verify": True})
        assert accounts.structured_content is not None
        assert accounts.structured_content["failures"] == []
        osobni = accounts.structured_content["accounts"][0]
        assert osobni["can_send"] is True and "@partner.example" in osobni["allowed_recipients"]


def test_demo_stdout_is_only_protocol(raw_rpc: Any, tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [*SERVER, "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(TMPDIR=str(tmp_path)),
    )
    rpc = raw_rpc(proc)
    try:
        rpc.send(initialize_request("raw-demo-test"))
        init = rpc.reply(1)["result"]
        assert init["serverInfo"]["name"] == "mcp-multi-gmail"
        assert "osobni, tym, automaty" in init["instructions"]
        rpc.send(INITIALIZED)
        rpc.send(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {"name": "mg_next_pass", "arguments": {"account": "all", "since": days_ago(3)}},
            },
        )
        result = rpc.reply(2)["result"]
        assert result["isError"] is False
        assert result["structuredContent"]["searched"] == ["osobni", "tym", "automaty"]
    finally:
        rest, errors = proc.communicate(timeout=60)  # stdin closed: the server and the emulator stop
    for line in rest.splitlines():
        json.loads(line)
    assert proc.returncode == 0
    text = errors.decode("utf-8")
    assert "ukázka na vymyšlených schránkách" in text and "Žádný účet Google" in text
    assert demo_folders(tmp_path) == []  # end of input: the folder with the demo passwords is gone


# ------------------------------------------------------------------ the demo's temporary folder


def demo_folders(root: Path) -> list[Path]:
    return sorted(root.glob(setup.FOLDER_PREFIX + "*"))


def start_demo(raw_rpc: Any, tmp_path: Path) -> tuple[subprocess.Popen[bytes], Any]:
    """`--demo` with its temporary folder under tmp_path, answered `initialize` (so fully up)."""
    proc = subprocess.Popen(
        [*SERVER, "--demo"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=clean_env(TMPDIR=str(tmp_path)),
    )
    rpc = raw_rpc(proc)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "signals", "version": "1"}}
    rpc.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
    assert rpc.reply(1)["result"]["serverInfo"]["name"] == "mcp-multi-gmail"
    return proc, rpc


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_demo_removes_its_folder_when_stopped_by_a_signal(raw_rpc: Any, tmp_path: Path, signum: int) -> None:
    proc, _ = start_demo(raw_rpc, tmp_path)
    try:
        [folder] = demo_folders(tmp_path)
        assert (folder / "multigmail-demo.json").is_file()  # the config with the sample passwords
        proc.send_signal(signum)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)
    assert proc.returncode == 128 + signum
    assert demo_folders(tmp_path) == []


def stale_owner(path: Path, **owner: Any) -> Path:
    path.mkdir()
    (path / "multigmail-demo.json").write_text("{}", encoding="utf-8")
    marker = {"program": setup.OWNER_PROGRAM, "host": socket.gethostname(), **owner}
    (path / setup.OWNER_FILE).write_text(json.dumps(marker), encoding="utf-8")
    return path


def dead_pid() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait(timeout=30)
    return finished.pid


def test_stale_demo_folders_are_recognised_before_deletion(tmp_path: Path) -> None:
    gone = dead_pid()
    stale = stale_owner(tmp_path / f"{setup.FOLDER_PREFIX}killed", pid=gone)
    alive = stale_owner(tmp_path / f"{setup.FOLDER_PREFIX}running", pid=os.getpid())
    elsewhere = stale_owner(tmp_path / f"{setup.FOLDER_PREFIX}container", pid=gone, host="another-host")
    foreign = stale_owner(tmp_path / f"{setup.FOLDER_PREFIX}foreign", pid=gone, program="something else")
    unmarked = tmp_path / f"{setup.FOLDER_PREFIX}unmarked"
    unmarked.mkdir()
    broken = tmp_path / f"{setup.FOLDER_PREFIX}broken"
    broken.mkdir()
    (broken / setup.OWNER_FILE).write_text("{not json", encoding="utf-8")
    unrelated = stale_owner(tmp_path / "somebody-elses-folder", pid=gone)
    assert setup.remove_stale_demo_folders(tmp_path) == [stale]
    assert not stale.exists()
    for kept in (alive, elsewhere, foreign, unmarked, broken, unrelated):
        assert kept.is_dir(), kept


def test_demo_start_removes_the_folder_a_killed_demo_left(raw_rpc: Any, tmp_path: Path) -> None:
    proc, _ = start_demo(raw_rpc, tmp_path)
    [left] = demo_folders(tmp_path)
    proc.kill()  # SIGKILL: no cleanup can run
    proc.communicate(timeout=30)
    assert left.is_dir()
    proc, _ = start_demo(raw_rpc, tmp_path)
    try:
        [current] = demo_folders(tmp_path)
        assert current != left and not left.exists()
    finally:
        proc.communicate(timeout=60)  # closes stdin: end of input
    assert proc.returncode == 0 and demo_folders(tmp_path) == []


def test_tour_failure_is_reported(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    async def broken_search(self: Tour, client: Client) -> None:
        self.heading(6, "6) …")
        await self.call(client, "mg_get_thread", {"account": "osobni", "thread_id": "1"})

    monkeypatch.setattr(Tour, "search_all", broken_search)
    assert tour("cs") == 1
    captured = capsys.readouterr()
    assert "5) Průchod znovu" in captured.out and "Hotovo" not in captured.out
    assert "chyba: prohlídka selhala v kroku 6: nástroj mg_get_thread vrátil chybu" in captured.err
    assert "not_found: " in captured.err  # the error's code and message, not its raw JSON


def test_tour_server_that_does_not_start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-such-python"))
    assert tour("en") == 1
    captured = capsys.readouterr()
    assert "error: the tour failed:" in captured.err and "1) Mailboxes" not in captured.out
