"""Model-based tests of the write tools: random sequences of writes, undos and changes made behind
the server's back, each predicted by a small model of the mailbox (write_model.py).

Every step goes through a real MCP client to the server, over TLS to the emulator. After each
step the emulator's store must equal the model, and what the tool reported must equal the model's
prediction. The suite runs a few short sequences, derandomized (the "ci" profile); a longer hunt
with fresh random ones (docs/en/development.md):

    uv run pytest -n0 tests/server/test_write_model.py --hypothesis-profile=writes-long
"""

from __future__ import annotations

import copy
import json
import tempfile
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, cast

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    RuleBasedStateMachine,
    initialize,
    invariant,
    multiple,
    rule,
    run_state_machine_as_test,
)
from sweep_box import BOX, PROCESSED, Spec, config_entry, load, message_id
from toolcalls import Call, error, ok
from write_model import (
    CLASSES,
    FLAG_NAMES,
    INBOX,
    SEEN,
    Entries,
    Mailbox,
    Msg,
    Preview,
    UndoRecord,
    diff,
    entries,
    entry,
    reported,
    snapshot,
)

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.runtime import Runtime
from support import gmail_env, load_runtime
from support.clients import Clients, clients

BANK_FROM, SHOP_FROM = "vypisy@banka.example", "info@obchod.example"
DOMAINS = ("banka.example", "obchod.example")
# (tag, sender, the tag of the message it answers): five threads, two of them across both senders.
LAYOUT = (
    ("m0", BANK_FROM, None),
    ("m1", SHOP_FROM, "m0"),
    ("m2", BANK_FROM, None),
    ("m3", BANK_FROM, "m2"),
    ("m4", SHOP_FROM, None),
    ("m5", SHOP_FROM, None),
    ("m6", BANK_FROM, None),
    ("m7", SHOP_FROM, "m6"),
)
IDS = [message_id(tag) for tag, _s, _r in LAYOUT]
SWEEP_CHANGES = (
    [{"add_label": PROCESSED}, {"remove_label": PROCESSED}]
    + [{key: name} for name in CLASSES for key in ("add_label", "remove_label")]
    + [{flag: value} for flag in FLAG_NAMES for value in (True, False)]
)

# The suite's default: 5 sequences of at most 20 steps (about 5 s of CPU). The writes-long profile
# (tests/conftest.py) runs its own, larger numbers.
SHORT = {"max_examples": 5, "stateful_step_count": 20, "deadline": None}


def model_settings() -> settings:
    if settings.get_current_profile_name() == "writes-long":
        return cast(settings, settings.default)
    # No shrinking in the suite: a failing sequence is at most 12 steps, and shrinking one runs
    # hundreds of sequences against the emulator (minutes); writes-long shrinks.
    return settings(settings.default, phases=(Phase.explicit, Phase.reuse, Phase.generate), **SHORT)  # type: ignore[arg-type]


class Steps:
    """How many steps of which kind ran, for the report at the end of the test."""

    def __init__(self) -> None:
        self.examples = 0
        self.by_rule: dict[str, int] = {}

    def count(self, rule: str) -> None:
        self.by_rule[rule] = self.by_rule.get(rule, 0) + 1


@dataclass
class Harness:
    """What the machine's steps reach: the emulator, the event loop of the MCP clients, the counts."""

    emulator: GmailEmulator
    portal: BlockingPortal
    hosts: Clients
    steps: Steps


class WriteMachine(RuleBasedStateMachine):
    harness: ClassVar[Harness]  # set by the test, on a subclass of its own
    undo_tokens = Bundle("undo_tokens")
    previews = Bundle("previews")

    def __init__(self) -> None:
        super().__init__()
        self.stack = ExitStack()
        self.runtime: Runtime | None = None
        self.model = Mailbox({})
        self.threads: dict[str, str] = {}  # thread tag -> Gmail's thread id
        self.previews_by_token: dict[str, Preview] = {}

    # --- plumbing ----------------------------------------------------------------------

    def call(self, tool: str, stubborn: str | None, *, would: bool = False, **args: Any) -> dict[str, Any]:
        """The tool's result, checked: what it reports changed is what changed in the mailbox (a
        preview changes nothing, and says what its apply would). `stubborn`: a message whose next
        STORE Gmail accepts and does not apply."""
        self.harness.steps.count(tool + (" apply" if "confirm_token" in args else ""))
        emulator = self.harness.emulator

        async def run(call_: Call) -> dict[str, Any]:
            assert self.runtime is not None
            answer: dict[str, Any] = await ok(call_, self.runtime, tool, account="o", **args)
            return answer

        before = snapshot(emulator, BOX)
        emulator.set_knobs(store_not_applied_ids={stubborn} if stubborn else set())
        try:
            result: dict[str, Any] = self.harness.portal.call(run, self.harness.hosts.call)
        finally:
            emulator.set_knobs(store_not_applied_ids=set())
        after = snapshot(emulator, BOX)
        assert diff(before, after) == (Counter() if would else reported(result)), result["changes"]
        return result

    def refused(self, tool: str, **args: Any) -> dict[str, Any]:
        self.harness.steps.count(tool + " refused")

        async def run(call_: Call) -> dict[str, Any]:
            assert self.runtime is not None
            answer: dict[str, Any] = await error(call_, self.runtime, tool, account="o", **args)
            return answer

        return self.harness.portal.call(run, self.harness.hosts.call)

    def teardown(self) -> None:
        self.stack.close()

    # --- the mailbox -------------------------------------------------------------------

    @initialize(data=st.data())
    def mailbox(self, data: st.DataObject) -> None:
        self.harness.steps.examples += 1
        self.harness.emulator.reset()
        specs, messages = [], {}
        for tag, sender, answers in LAYOUT:
            labels = {INBOX} if data.draw(st.booleans(), label=f"{tag} inbox") else set()
            if data.draw(st.booleans(), label=f"{tag} processed"):
                labels.add(PROCESSED)
            labels |= set(data.draw(st.sets(st.sampled_from(CLASSES)), label=f"{tag} classes"))
            flags = set(data.draw(st.sets(st.sampled_from(sorted(FLAG_NAMES.values()))), label=f"{tag} flags"))
            subject = f"Výpis {answers or tag}"
            specs.append(
                Spec(
                    tag,
                    f"Re: {subject}" if answers else subject,
                    sender,
                    tuple(sorted(labels)),
                    tuple(sorted(flags)),
                    reply_to=answers,
                )
            )
            messages[message_id(tag)] = Msg(sender, message_id(answers or tag), labels, flags)
        load(self.harness.emulator, specs)
        self.model = Mailbox(messages)
        thrids = {m.header_id: str(m.thrid) for m in self.harness.emulator.messages(BOX)}
        for mid, msg in messages.items():
            assert self.threads.setdefault(msg.thread, thrids[mid]) == thrids[mid]  # threads as laid out
        state = Path(self.stack.enter_context(tempfile.TemporaryDirectory()))
        config = state / "multigmail.json"
        config.write_text(json.dumps({"accounts": [config_entry()]}, ensure_ascii=False), "utf-8")
        self.runtime = load_runtime(config, gmail_env(self.harness.emulator), state_dir=state / "state")

    @invariant()
    def mailbox_is_the_model(self) -> None:
        if self.runtime is not None:
            assert snapshot(self.harness.emulator, BOX) == self.model.view()

    # --- label and flag tools -----------------------------------------------------------

    @rule(
        target=undo_tokens,
        picked=st.lists(st.sampled_from(IDS), min_size=1, max_size=4, unique=True),
        add=st.booleans(),
        fail_one=st.booleans(),
    )
    def label_messages(self, picked: list[str], add: bool, fail_one: bool) -> Any:
        live = self.model.live(picked)
        todo = [m for m in live if (PROCESSED in self.model.messages[m].labels) is not add]
        stubborn = todo[0] if fail_one and todo else None
        changed, already, failed, changes, expected = self.model.change(
            live, "label", PROCESSED, add, stubborn=stubborn
        )
        tool = "mg_label_message" if add else "mg_unlabel_message"
        result = self.call(tool, stubborn, message_ids=picked, label=PROCESSED)
        assert entries(result) == expected
        outcomes = {o["message_id"]: o["outcome"] for o in result["messages"]}
        assert outcomes == {m: "not_found" for m in picked if m not in live} | {m: "changed" for m in changed} | {
            m: "already" for m in already
        } | {m: "failed" for m in failed}
        succeeded = len(changed) + len(already)
        assert (result["succeeded"], result["failed"]) == (succeeded, len(picked) - succeeded)
        return self.recorded(result, tool, changes, bool(todo))

    @rule(
        target=undo_tokens,
        threads=st.lists(st.sampled_from([f"m{n}" for n in (0, 2, 4, 5, 6)]), min_size=1, max_size=3, unique=True),
        label=st.sampled_from(CLASSES),
        add=st.booleans(),
        fail_one=st.booleans(),
    )
    def label_threads(self, threads: list[str], label: str, add: bool, fail_one: bool) -> Any:
        before = self.model.view()
        members = {t: self.model.thread(message_id(t)) for t in threads}
        every = [m for t in threads for m in members[t]]
        todo = [m for m in every if (label in self.model.messages[m].labels) is not add]
        stubborn = todo[0] if fail_one and todo else None
        others = tuple(c for c in CLASSES if c != label) if add else ()
        changed, already, failed, changes, expected = self.model.change(
            every, "label", label, add, replaces=others, stubborn=stubborn
        )
        tool = "mg_label_thread" if add else "mg_unlabel_thread"
        result = self.call(tool, stubborn, thread_ids=[self.threads[message_id(t)] for t in threads], label=label)
        assert entries(result) == expected
        after = self.model.view()
        assert (result["succeeded"], result["failed"]) == (len(changed) + len(already), len(failed))
        for thread, outcome in zip(threads, result["threads"], strict=True):
            own = members[thread]
            had = {c for m in own for c in before[m][0] if c in others}
            still = {c for m in own for c in after[m][0]}
            replaced = sorted(had - still)
            if not own:
                want = "not_found"
            elif any(m in failed for m in own):
                want = "failed"
            else:
                want = "changed" if any(m in changed for m in own) or replaced else "already"
            assert (outcome["outcome"], outcome["replaced"], outcome["messages"]) == (want, replaced, len(own))
        return self.recorded(result, tool, changes, bool(todo) or bool(changes))

    @rule(
        target=undo_tokens,
        mid=st.sampled_from(IDS),
        seen=st.sampled_from([None, True, False]),
        flagged=st.booleans(),
    )
    def set_flags(self, mid: str, seen: bool | None, flagged: bool) -> Any:
        msg = self.model.messages[mid]
        args: dict[str, Any] = {"message_id": mid, "flagged": flagged} | ({} if seen is None else {"seen": seen})
        if msg.trash:
            assert self.refused("mg_set_flags", **args)["code"] == "not_found"
            return multiple()
        wanted = {name: value for name, value in (("seen", seen), ("flagged", flagged)) if value is not None}
        changed = sorted(n for n, on in wanted.items() if msg.has("flag", FLAG_NAMES[n]) is not on)
        changes: list[Any] = []
        expected: Entries = {}
        for name, on in wanted.items():
            *_outcomes, done, counted = self.model.change([mid], "flag", FLAG_NAMES[name], on)
            changes += done
            expected |= counted
        result = self.call("mg_set_flags", None, **args)
        assert entries(result) == expected
        assert (result["changed"], result["already_set"]) == (changed, sorted(set(wanted) - set(changed)))
        return self.recorded(result, "mg_set_flags", changes, bool(changes))

    @rule(target=undo_tokens, mid=st.sampled_from(IDS))
    def trash(self, mid: str) -> Any:
        msg = self.model.messages[mid]
        if msg.trash:
            result = self.call("mg_trash_message", None, message_id=mid)
            assert (result["moved"], result["undo_token"]) == (False, None)
            assert entries(result) == entry("trash", "", True, (0, 1, 0))
            return multiple()
        labels = self.model.trash(mid)
        result = self.call("mg_trash_message", None, message_id=mid)
        assert result["moved"] is True and entries(result) == entry("trash", "", True, (1, 0, 0))
        token = result["undo_token"]
        self.model.records[token] = UndoRecord("mg_trash_message", trashed={mid: labels})
        return token

    def recorded(self, result: dict[str, Any], tool: str, changes: list[Any], expect_token: bool) -> Any:
        token = result["undo_token"]
        assert (token is not None) is expect_token, result
        if token is None:
            return multiple()
        self.model.records[token] = UndoRecord(tool, changes=changes)
        return token

    # --- sweeps and undo -----------------------------------------------------------------

    @rule(target=previews, domain=st.sampled_from(DOMAINS), change=st.sampled_from(SWEEP_CHANGES))
    def sweep_preview(self, domain: str, change: dict[str, object]) -> Any:
        attribute, name, on, replaces = sweep_change(change)
        covered = self.model.covered(domain, name in CLASSES)
        already = [m for m in covered if self.model.messages[m].has(attribute, name) is on]
        would = copy.deepcopy(self.model).change(covered, attribute, name, on, replaces=replaces)[4]
        query = f"from:{domain}"
        result = self.call("mg_sweep", None, would=True, query=query, change=change)
        assert entries(result) == would  # what the apply would change were every message to take it
        threads = {self.model.messages[m].thread for m in covered}
        assert (result["matched_messages"], result["matched_threads"]) == (len(covered), len(threads))
        assert (result["would_change"], result["already"], result["applied"]) == (
            len(covered) - len(already),
            len(already),
            False,
        )
        preview = Preview(result["confirm_token"], result["undo_token"], query, change, frozenset(covered))
        self.previews_by_token[preview.confirm_token] = preview
        self.model.records[preview.undo_token] = UndoRecord("mg_sweep", reserved=True)
        return preview.confirm_token

    @rule(confirm=previews, fail_one=st.booleans())
    def sweep_apply(self, confirm: str, fail_one: bool) -> None:
        preview = self.previews_by_token[confirm]
        args = {"query": preview.query, "change": preview.change, "confirm_token": confirm}
        if preview.used:
            assert self.refused("mg_sweep", **args)["code"] == "invalid_input"
            return
        preview.used = True
        attribute, name, on, replaces = sweep_change(preview.change)
        now = self.model.covered(preview.query.removeprefix("from:"), name in CLASSES)
        still = [m for m in now if m in preview.covered]
        todo = [m for m in still if self.model.messages[m].has(attribute, name) is not on]
        stubborn = todo[0] if fail_one and todo else None
        changed, already, failed, changes, expected = self.model.change(
            still, attribute, name, on, replaces=replaces, stubborn=stubborn
        )
        result = self.call("mg_sweep", stubborn, **args)
        assert entries(result) == expected
        assert result["applied"] is True and result["undo_token"] == preview.undo_token
        assert (result["changed"], result["already"], result["failed"]) == (len(changed), len(already), len(failed))
        assert (result["left_since_preview"], result["new_since_preview"]) == (
            len(preview.covered - set(now)),
            len(set(now) - preview.covered),
        )
        record = self.model.records[preview.undo_token]
        record.reserved, record.changes = False, changes

    @rule(token=undo_tokens)
    def undo(self, token: str) -> None:
        record = self.model.records[token]
        if record.used:
            assert self.refused("mg_undo", undo_token=token)["code"] == "invalid_input"
            return
        if record.reserved:
            assert self.refused("mg_undo", undo_token=token)["code"] == "not_found"
            return
        record.used = True
        restored, skipped, expected = self.model.undo(record)
        result = self.call("mg_undo", None, undo_token=token)
        assert entries(result) == expected
        assert (result["undone"], result["restored"], result["skipped"], result["failed"]) == (
            record.tool,
            restored,
            skipped,
            0,
        )

    # --- behind the server's back ----------------------------------------------------------

    @rule(mid=st.sampled_from(IDS), name=st.sampled_from([PROCESSED, *CLASSES, SEEN]), on=st.booleans())
    def elsewhere(self, mid: str, name: str, on: bool) -> None:
        """Another client (Gmail's web, a phone) changes a label or a flag over IMAP meanwhile."""
        self.harness.steps.count("elsewhere")
        msg = self.model.messages[mid]
        if msg.trash:
            return
        if name == SEEN:
            msg.put("flag", SEEN, on)
            self.harness.emulator.set_flags(BOX, mid, msg.flags)
        elif on:
            msg.labels.add(name)
            self.harness.emulator.add_labels(BOX, mid, [name])
        else:
            msg.labels.discard(name)
            self.harness.emulator.remove_labels(BOX, mid, [name])


def sweep_change(change: dict[str, object]) -> tuple[str, str, bool, tuple[str, ...]]:
    """(attribute, name, on, the classifications it replaces) of a sweep's change."""
    [(key, value)] = change.items()
    if key in FLAG_NAMES:
        return "flag", FLAG_NAMES[key], bool(value), ()
    name = str(value)
    replaces = tuple(c for c in CLASSES if c != name) if key == "add_label" and name in CLASSES else ()
    return "label", name, key == "add_label", replaces


@pytest.fixture
def portal_clients() -> Iterator[tuple[BlockingPortal, Clients]]:
    """An event loop in a thread of its own with the in-process MCP clients on it: the state machine's
    rules are plain functions that call tools through it."""
    with start_blocking_portal("asyncio") as portal, portal.wrap_async_context_manager(clients()) as hosts:
        yield portal, hosts


def test_writes_follow_the_model(
    emulator: GmailEmulator, portal_clients: tuple[BlockingPortal, Clients], capsys: pytest.CaptureFixture[str]
) -> None:
    portal, hosts = portal_clients
    steps = Steps()
    machine = type("BoundWriteMachine", (WriteMachine,), {"harness": Harness(emulator, portal, hosts, steps)})
    run_state_machine_as_test(machine, settings=model_settings())
    with capsys.disabled():
        print(f"\nwrite model: {steps.examples} examples, {sum(steps.by_rule.values())} steps {steps.by_rule}")
