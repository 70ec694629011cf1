"""SIGKILL of a real server process between two batches of a sweep, then mg_undo in a new process.

The emulator calls a hook when the sweep's second UID STORE arrives; the hook kills the server
there, so no timing is guessed. The undo record was written and fsync'd before the first STORE
went out: the new process finds it on disk and sets every message back.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path

from stdio_driver import ServerProcess, server_env, tool_result
from sweep_box import PROCESSED, Spec, config_entry, load, state

from gmail_emulator import FaultRule, GmailEmulator
from mcp_multi_gmail.mail.undo import records
from support import gmail_env, wait_until

MESSAGES = 1500  # two batches of STOREs (1 000 UIDs each)
QUERY = "from:info@banka.example"
CHANGE = {"add_label": PROCESSED}


def test_killed_between_two_batches_then_undone_by_a_new_process(
    emulator: GmailEmulator, write_config: Callable[..., Path], tmp_path: Path
) -> None:
    specs = [Spec(f"m-{n}", f"Oznámení {n}", "info@banka.example", ("\\Inbox",)) for n in range(MESSAGES)]
    load(emulator, specs)
    before = state(emulator)
    config = write_config([config_entry(sweep_limit=2000)])
    env = server_env(gmail_env(emulator), tmp_path / "state")

    first = ServerProcess(config, env)
    killed = threading.Event()

    def kill() -> None:
        first.kill()  # SIGKILL, while the server waits for its second STORE's answer
        # ... and that STORE, which runs after the hook, does not take: the second batch never happened.
        emulator.set_knobs(store_not_applied_ids={f"m-{n}@banka.example" for n in range(1000, MESSAGES)})
        killed.set()

    try:
        failed, preview = tool_result(
            first.wait(first.call("mg_sweep", {"account": "o", "query": QUERY, "change": CHANGE}), 60)
        )
        assert not failed, preview
        emulator.add_fault(FaultRule("hook", match="UID STORE", nth=2, hook=kill))
        first.call(
            "mg_sweep", {"account": "o", "query": QUERY, "change": CHANGE, "confirm_token": preview["confirm_token"]}
        )
        wait_until(killed.is_set, 60, "the server to be killed at the second STORE")
    finally:
        first.close()
    swept = state(emulator)
    labelled = sum(1 for labels, _f, _l in swept.values() if PROCESSED in labels)
    assert labelled == 1000  # the first batch, read back and settled

    # The record on disk: the sweep's undo record, planned with every message, first batch settled.
    folder = tmp_path / "state" / records.FOLDER
    undo_record = json.loads(records.Records(tmp_path / "state").path(preview["undo_token"]).read_text())
    assert undo_record["state"] == "planned" and undo_record["tool"] == "mg_sweep"
    [group] = undo_record["groups"]
    assert (group["attribute"], group["name"], group["on"]) == ("label", PROCESSED, True)
    assert len(group["messages"]) == MESSAGES and group["failed"] == []
    assert sorted(p.stat().st_mode & 0o777 for p in folder.glob("*.json")) == [0o600, 0o600]

    second = ServerProcess(config, env)
    try:
        failed, undone = tool_result(
            second.wait(second.call("mg_undo", {"account": "o", "undo_token": preview["undo_token"]}), 60)
        )
    finally:
        second.close()
    assert not failed, undone
    assert (undone["restored"], undone["skipped"], undone["failed"]) == (1000, 500, 0)
    assert all("never reached it" in m["reason"] for m in undone["messages"]) and undone["cut"][0]["total"] == 500
    assert state(emulator) == before
    print(json.dumps({"labelled_when_killed": labelled, "record": {**group, "messages": len(group["messages"])}}))
    print(json.dumps({k: v for k, v in undone.items() if k != "messages"} | {"first_skipped": undone["messages"][0]}))
