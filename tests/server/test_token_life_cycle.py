"""One life cycle for every token (planned -> applied -> used), under the interleavings that can be
driven exactly: two calls at once in one server, two server processes on one state folder, a
SIGKILL in the middle of an undo, and an apply abandoned at its deadline. A used token never becomes
usable again; an undo cut off can be finished with the same token. The emulator's hook holds a
STORE while the other call is made, so no timing is guessed."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from stdio_driver import ServerProcess, server_env, tool_result
from sweep_box import ACCOUNTING, BANK, BOX, PROCESSED, Spec, config_entry, load, message_id, state

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.mail.undo import records
from support import gmail_env, wait_until

QUERY = "from:banka.example"


def thread_box() -> list[Spec]:
    out = [Spec("t-0", "Výpis", "vypisy@banka.example", ("\\Inbox", BANK))]
    out += [Spec(f"t-{n}", "Re: Výpis", "vypisy@banka.example", ("\\Inbox", BANK), reply_to="t-0") for n in (1, 2)]
    return out


class Held:
    """A hook that holds the command it fires on until `go` is set."""

    def __init__(self) -> None:
        self.reached, self.go = threading.Event(), threading.Event()

    def __call__(self) -> None:
        self.reached.set()
        self.go.wait(60)


@contextmanager
def servers(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path, count: int, **options: Any
) -> Iterator[list[ServerProcess]]:
    load(emulator, thread_box(), labels=(PROCESSED, ACCOUNTING, BANK))
    config = write_config([config_entry()])
    env = server_env(gmail_env(emulator), tmp_path / "state")
    started = [ServerProcess(config, env, **options) for _ in range(count)]
    try:
        yield started
    finally:
        for server in started:
            server.close()


def result(server: ServerProcess, tool: str, args: dict[str, Any]) -> tuple[bool, dict[str, Any]]:
    failed, body = tool_result(server.wait(server.call(tool, {"account": "o", **args}), 60))
    return failed, body


def classify(emulator: GmailEmulator, server: ServerProcess) -> str:
    thread = str(emulator.message(BOX, message_id("t-0")).thrid)  # type: ignore[union-attr]
    failed, done = result(server, "mg_label_thread", {"thread_id": thread, "label": ACCOUNTING})
    assert not failed, done
    return str(done["undo_token"])


def test_two_undos_at_once_in_one_server(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    with servers(emulator, write_config, tmp_path, 1) as [server]:
        before = state(emulator)
        token = classify(emulator, server)
        held = Held()
        emulator.add_fault(FaultRule("hook", match="UID STORE", hook=held))
        first = server.call("mg_undo", {"account": "o", "undo_token": token})
        wait_until(held.reached.is_set, 30, "the first undo's STORE")
        refused, body = result(server, "mg_undo", {"undo_token": token})
        print("second undo meanwhile:", body)
        assert refused and "still going on" in body["message"]
        held.go.set()
        failed, undone = tool_result(server.wait(first, 60))
        assert not failed and undone["restored"] == 6
        refused, body = result(server, "mg_undo", {"undo_token": token})
        assert refused and "already used" in body["message"]
        assert state(emulator) == {mid: before[mid] for mid in state(emulator)}


def test_two_applies_of_one_confirm_token_at_once(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    with servers(emulator, write_config, tmp_path, 1) as [server]:
        change = {"add_label": PROCESSED}
        _failed, preview = result(server, "mg_sweep", {"query": QUERY, "change": change})
        held = Held()
        emulator.add_fault(FaultRule("hook", match="UID STORE", hook=held))
        args = {"account": "o", "query": QUERY, "change": change, "confirm_token": preview["confirm_token"]}
        first = server.call("mg_sweep", args)
        wait_until(held.reached.is_set, 30, "the first apply's STORE")
        refused, body = result(server, "mg_sweep", args)
        refused_undo, undo_body = result(server, "mg_undo", {"undo_token": preview["undo_token"]})
        print("second apply meanwhile:", body["message"], "| undo meanwhile:", undo_body["message"])
        assert refused and "used already" in body["message"]
        assert refused_undo and "still being applied" in undo_body["message"]
        held.go.set()
        failed, applied = tool_result(server.wait(first, 60))
        assert not failed and applied["changed"] == 3
        assert result(server, "mg_sweep", args)[0]
        assert not result(server, "mg_undo", {"undo_token": preview["undo_token"]})[0]
        refused, body = result(server, "mg_undo", {"undo_token": preview["undo_token"]})
        assert refused and "already used" in body["message"]


def test_two_processes_and_a_sigkill_in_the_middle_of_an_undo(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    with servers(emulator, write_config, tmp_path, 2) as [first, second]:
        before = state(emulator)
        token = classify(emulator, first)
        held = Held()
        emulator.add_fault(FaultRule("hook", match="UID STORE", hook=held))
        first.call("mg_undo", {"account": "o", "undo_token": token})
        wait_until(held.reached.is_set, 30, "the first process's undo STORE")
        refused, body = result(second, "mg_undo", {"undo_token": token})
        assert refused and "still going on" in body["message"]  # the other process holds it
        first.kill()  # SIGKILL while it holds the token
        held.go.set()  # the STORE it sent still runs in Gmail: Banka back on the thread
        wait_until(lambda: any(c.name == "UID STORE" for c in emulator.commands(BOX)), 30, "the STORE to run")
        record = json.loads(records.Records(tmp_path / "state").path(token).read_text())
        print("record after the kill:", {k: record.get(k) for k in ("state", "holder")})
        failed, undone = result(second, "mg_undo", {"undo_token": token})
        print("undo in the second process:", json.dumps(undone, ensure_ascii=False))
        assert not failed and (undone["restored"], undone["skipped"], undone["failed"]) == (6, 0, 0)
        assert state(emulator) == before
        refused, body = result(second, "mg_undo", {"undo_token": token})
        assert refused and "already used" in body["message"]


def test_an_apply_abandoned_at_its_deadline(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    held = Held()
    try:
        with servers(emulator, write_config, tmp_path, 1, call_timeout_s=2) as [server]:
            before = state(emulator)
            change = {"add_label": PROCESSED}
            _failed, preview = result(server, "mg_sweep", {"query": QUERY, "change": change})
            emulator.add_fault(FaultRule("hook", match="UID STORE", hook=held))
            args = {"query": QUERY, "change": change, "confirm_token": preview["confirm_token"]}
            failed, body = result(server, "mg_sweep", args)
            print("apply at its deadline:", body)
            assert failed
            path = records.Records(tmp_path / "state").path(preview["undo_token"])
            wait_until(lambda: "holder" not in json.loads(path.read_text()), 30, "the abandoned apply to let go")
            held.go.set()
            wait_until(lambda: any(c.name == "UID STORE" for c in emulator.commands(BOX)), 30, "the STORE to run")
            assert result(server, "mg_sweep", args)[0]  # used: its change went out
            failed, undone = result(server, "mg_undo", {"undo_token": preview["undo_token"]})
            assert not failed, undone
            assert state(emulator) == before
            assert result(server, "mg_undo", {"undo_token": preview["undo_token"]})[0]
    finally:
        held.go.set()
