"""A sweep over 1 200 threads, its apply and its undo: the snapshot diff beside the reported counts.

    uv run python benchmarks/sweep_diff.py                 # 1 200 threads, 5 messages Gmail will not change
    uv run python benchmarks/sweep_diff.py --stubborn 0    # every message takes the change
    uv run python benchmarks/sweep_diff.py --threads 300

The mailbox is the sweep tests' (tests/server/sweep_box.py): 1 200 bank statements, the first 200
with a reply in the same thread, every 4th thread classified Účetnictví already, every 10th Banka
(the classification a sweep to Účetnictví replaces), every 3rd processed. The emulator runs
in-process; the server is called through an in-process MCP client. For each call the script
snapshots the mailbox before and after and prints, per label and flag, how many messages got it
and lost it beside what the result's `changes` report. `--stubborn N` makes Gmail accept and not
apply the STORE of N messages of the apply (the emulator's `store_not_applied_ids`), so the apply
reports failures. Exits 1 when a diff and a report differ, or the undo does not bring back the
mailbox as it was.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from mcp import Client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "server"))  # the tests' mailbox and snapshot helpers

from sweep_box import ACCOUNTING, BOX, accounting_box, config_entry, load, message_id  # noqa: E402
from write_model import Key, diff, reported, snapshot  # noqa: E402

from gmail_emulator import GmailEmulator, Knobs  # noqa: E402
from mcp_multi_gmail.gmail.endpoint import loopback_environ  # noqa: E402
from mcp_multi_gmail.runtime import Runtime  # noqa: E402
from mcp_multi_gmail.server import build_server  # noqa: E402

QUERY = "from:banka.example"
CHANGE = {"add_label": ACCOUNTING}


def rows(step: str, seen: Counter[Key], said: Counter[Key]) -> list[str]:
    out = []
    for key in sorted(set(seen) | set(said)):
        mark = "" if seen[key] == said[key] else "   <-- differs"
        out.append(f"{step:8} {key[0]:5} {key[1] or 'Trash':12} {key[2]:8} {seen[key]:>13} {said[key]:>9}{mark}")
    return out or [f"{step:8} (nothing changed, nothing reported)"]


async def run(emulator: GmailEmulator, runtime: Runtime, stubborn: int) -> int:
    lines = [f"{'step':8} {'kind':5} {'name':12} {'action':8} {'snapshot diff':>13} {'reported':>9}"]
    problems = 0
    async with Client(build_server(runtime)) as client:

        async def call(tool: str, **args: Any) -> dict[str, Any]:
            result = await client.call_tool(tool, {"account": "o", **args})
            assert result.is_error is False and result.structured_content is not None, result.content
            data: dict[str, Any] = result.structured_content
            return data

        start = snapshot(emulator, BOX)
        began = time.monotonic()
        preview = await call("mg_sweep", query=QUERY, change=CHANGE)
        previewed = snapshot(emulator, BOX)
        # The preview changes nothing; its `changes` say what the apply would change.
        problems += diff(start, previewed) != Counter()
        lines += rows("preview", diff(start, previewed), Counter())
        lines += [f"{'':8} (the preview's would: {dict(reported(preview))})"]
        # Gmail will not take the change on these (the first STORE each is in is accepted, not applied).
        unchanged = [f"vypis-{n}" for n in range(1, 12 * stubborn, 12)][:stubborn]
        emulator.set_knobs(store_not_applied_ids={message_id(tag) for tag in unchanged})
        applied = await call("mg_sweep", query=QUERY, change=CHANGE, confirm_token=preview["confirm_token"])
        emulator.set_knobs(store_not_applied_ids=set())
        swept = snapshot(emulator, BOX)
        problems += diff(previewed, swept) != reported(applied)
        lines += rows("apply", diff(previewed, swept), reported(applied))
        undone = await call("mg_undo", undo_token=applied["undo_token"])
        back = snapshot(emulator, BOX)
        problems += diff(swept, back) != reported(undone)
        lines += rows("undo", diff(swept, back), reported(undone))
        took = time.monotonic() - began
    same = back == start
    problems += not same
    print("\n".join(lines))
    print(
        f"\n{preview['matched_messages']} messages in {preview['matched_threads']} threads; preview would_change "
        f"{preview['would_change']}, already {preview['already']}; apply changed {applied['changed']}, already "
        f"{applied['already']}, failed {applied['failed']}; undo restored {undone['restored']}, skipped "
        f"{undone['skipped']}, failed {undone['failed']}"
    )
    print("apply changes:", json.dumps(applied["changes"], ensure_ascii=False))
    print("undo changes: ", json.dumps(undone["changes"], ensure_ascii=False))
    print(f"after the undo the mailbox is as before the sweep: {'yes' if same else 'NO'}; three calls in {took:.1f} s")
    print("OK: every diff equals what was reported" if not problems else f"FAILED: {problems} differences")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1200)
    parser.add_argument("--replies", type=int, default=200)
    parser.add_argument("--stubborn", type=int, default=5, help="messages Gmail will not change in the apply")
    args = parser.parse_args()
    box = accounting_box(args.threads, min(args.replies, args.threads))
    with tempfile.TemporaryDirectory(prefix="sweep-diff-") as tmp:
        folder = Path(tmp)
        knobs = Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)
        with GmailEmulator(workdir=folder / "emulator", knobs=knobs) as emulator:
            load(emulator, box.specs)
            config = folder / "config.json"
            config.write_text(json.dumps({"accounts": [config_entry(sweep_limit=10_000)]}), "utf-8")
            runtime = Runtime.load(config, environ=loopback_environ(**emulator.env()), state_dir=folder / "state")
            return anyio.run(run, emulator, runtime, args.stubborn)


if __name__ == "__main__":
    sys.exit(main())
