"""Labelling: the processed label on messages, a classification on threads, flags on a message.

Every change is read back by FETCH (never by search: the index lags), reported per message,
and idempotent, so an interrupted batch can simply be repeated. Permission decisions are the
policy module's; this module only carries them out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from ... import policy, progress
from ...config import Account
from ...errors import invalid_input, not_found
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession
from ...runtime import Runtime
from .. import undo
from ..core import budget, inputs, writes
from ..core.lookup import ensure_label, find_message, or_tree
from ..core.session import in_session
from ..core.summary import carries
from .window import WindowState, scan_window

MAX_IDS = 500
# The outcomes a result counts as succeeded (and fit_outcomes keeps last, as the ones needing no attention).
_SUCCEEDED = ("changed", "already")
Outcome = Literal["changed", "already", "not_found", "failed"]


def _omitted(outcomes: str, listed: str, counted: str, others: str) -> Any:
    """A `<listed>_omitted` count: the successes fit_outcomes left out to keep the result within the budget."""
    return Field(
        default=0,
        description=f"{outcomes} left out of `{listed}` to keep the result within its {budget.BUDGET_WORDS}: only "
        f"changed/already ones{counted}; every {others} is listed, first",
    )


class LabelOutcome(BaseModel):
    message_id: str | None
    uid: int | None
    outcome: Outcome
    detail: str | None


class _Change(BaseModel):
    """What a message label change and a thread label change both report (each adds `cut` last)."""

    account: str
    label: str
    action: Literal["added", "removed"]
    label_created: bool
    succeeded: int
    failed: int
    messages: list[LabelOutcome]
    window: WindowState | None = Field(default=None, description="With since: the window as a new pass sees it")
    messages_omitted: int = _omitted("Outcomes", "messages", " (counted in succeeded)", "other outcome")
    undo_token: str | None = undo.undo_token_field()
    changes: list[writes.AttributeChange] = writes.changes_field()


class LabelChange(_Change):
    cut: list[budget.Cut] = budget.cut_field()


class ThreadOutcome(BaseModel):
    thread_id: str
    outcome: Outcome
    detail: str | None
    classification_before: list[str]
    classification_after: list[str]
    replaced: list[str] = Field(description="Other classifications taken off by this call")
    messages: int = Field(description="Messages of the thread")
    failed_messages: int


class ThreadLabelChange(_Change):
    thread_id: str | None = Field(description="The thread of a thread_id call; null with thread_ids")
    classification_before: list[str] = Field(description="With thread_id; [] with thread_ids (see threads)")
    classification_after: list[str]
    replaced: list[str]
    threads: list[ThreadOutcome] = Field(
        description="One outcome per thread asked for (see threads_omitted). With thread_ids, `messages` lists "
        "only failed messages"
    )
    threads_omitted: int = _omitted("Thread outcomes", "threads", "", "not_found/failed thread")
    cut: list[budget.Cut] = budget.cut_field()


class FlagsResult(BaseModel):
    account: str
    message_id: str
    uid: int
    flags_before: list[str]
    flags_after: list[str]
    changed: list[str]
    already_set: list[str]
    undo_token: str | None = undo.undo_token_field()
    changes: list[writes.AttributeChange] = writes.changes_field()
    cut: list[budget.Cut] = budget.cut_field()


def _has(item: Fetched | None, label: str) -> bool | None:
    if item is None or item.labels is None:
        return None
    return carries(item.labels, label)


@dataclass
class _Applied:
    outcomes: dict[int, LabelOutcome]
    after: dict[int, Fetched]
    wants: list[writes.Want]


def apply_label(
    session: ImapSession,
    before: dict[int, Fetched],
    message_ids: dict[int, str | None],
    label: str,
    *,
    add: bool,
    recorder: undo.Recorder,
    replaced: list[str] = (),  # type: ignore[assignment]
) -> _Applied:
    """The label on (or off) every message of `before`, through the one routine, each read back; with
    `replaced`, those classifications come off where the label was read back on. One outcome per message."""
    uids = list(before)
    wants = [writes.Want("label", label, add, uids)]
    wants += [writes.Want("label", other, False, uids, replaced_by=label) for other in replaced]
    after = writes.apply(session, before, wants, recorder=recorder)
    want = wants[0]
    verb = "apply" if add else "remove"
    outcomes: dict[int, LabelOutcome] = {}
    for uid in uids:
        if uid in want.already:
            outcome, detail = "already", None
        elif uid in want.changed:
            outcome, detail = "changed", None
        elif not want.refused:
            outcome = "failed"
            detail = (
                f'Gmail accepted the change but the label "{label}" was '
                f"{'not ' if add else 'still '}on the message when it was read back. Call again with the same ids."
            )
        else:
            outcome, detail = "failed", f'Gmail refused to {verb} the label "{label}".'
        stuck = [w.name for w in wants[1:] if uid in w.failed]
        if stuck and outcome != "failed":
            outcome = "failed"
            detail = (
                f'The label "{label}" is on, but the classification "{stuck[0]}" it replaces was still on the message '
                "when it was read back. Call again with the same ids."
            )
        outcomes[uid] = LabelOutcome(message_id=message_ids.get(uid), uid=uid, outcome=outcome, detail=detail)
    return _Applied(outcomes, after, wants)


def _unique_ids(message_ids: list[str]) -> tuple[list[str], int]:
    """Bare ids in first-seen order (duplicates collapse) and the count of empty ones."""
    if len(message_ids) > MAX_IDS:
        raise invalid_input(f"At most {MAX_IDS} Message-IDs per call; split the batch.")
    seen: dict[str, str] = {}
    empty = 0
    for raw in message_ids:
        if not raw.strip().strip("<>").strip():
            empty += 1
            continue
        bare = inputs.message_id(raw)
        seen.setdefault(bare.casefold(), bare)
    return list(seen.values()), empty


def _label_messages(
    runtime: Runtime,
    session: ImapSession,
    account: Account,
    ids: list[str],
    empty: int,
    label: str,
    add: bool,
    since: datetime | None,
) -> LabelChange:
    # A batch of hundreds of ids takes several round trips per step: a client that asked hears each step.
    steps = progress.Steps(3 if since is not None else 2)
    session.open(ALL_MAIL, writable=True)
    found = session.find_message_ids(ids)  # also reads each copy's labels: the "before" state
    missing = [
        LabelOutcome(message_id=None, uid=None, outcome="not_found", detail="An empty Message-ID cannot be looked up.")
        for _ in range(empty)
    ]
    chosen: dict[int, str | None] = {}
    before: dict[int, Fetched] = {}
    for bare in ids:
        copies = found.get(bare.casefold())
        if not copies:
            missing.append(
                LabelOutcome(
                    message_id=bare,
                    uid=None,
                    outcome="not_found",
                    detail=f'No message with this Message-ID in mailbox "{account.name}".',
                )
            )
        else:
            newest = max(copies, key=lambda c: c.uid)  # the newest copy; two ids never share a UID
            chosen.setdefault(newest.uid, bare)
            before[newest.uid] = newest
    steps.step(f'found {len(chosen)} of {len(ids) + empty} messages in mailbox "{account.name}"')
    created = ensure_label(session, label) if add and chosen else False
    recorder = undo.Recorder(runtime, account, "mg_label_message" if add else "mg_unlabel_message", session)
    applied = apply_label(session, before, chosen, label, add=add, recorder=recorder)
    steps.step(f'label "{label}" {"set on" if add else "taken off"} {len(chosen)} messages and read back')
    messages = missing + [applied.outcomes[uid] for uid in chosen]
    change = LabelChange(
        **_counts(account, label, add, created, messages),
        messages=messages,
        undo_token=recorder.token,
        changes=[want.entry() for want in applied.wants],
    )
    if since is not None:
        change.window = scan_window(session, account, since).state()
        steps.step("pass window read")
    return fit_outcomes(change)


def _counts(account: Account, label: str, add: bool, created: bool, messages: list[LabelOutcome]) -> dict[str, Any]:
    """What every label change reports first: the change, and on how many messages it succeeded."""
    ok = sum(1 for m in messages if m.outcome in _SUCCEEDED)
    return {
        "account": account.name,
        "label": label,
        "action": "added" if add else "removed",
        "label_created": created,
        "succeeded": ok,
        "failed": len(messages) - ok,
    }


Change = TypeVar("Change", bound=_Change)


def fit_outcomes(change: Change, field: Literal["messages", "threads"] = "messages") -> Change:
    """Within the result budget: when every outcome in `field` (messages, or threads) does not fit,
    the ones that need attention come first and whole, and as many successes as fit follow
    (`<field>_omitted` counts the rest), rather than the last resort cutting the list's end unsaid."""
    if budget.size(change) <= budget.RESULT_BUDGET:
        return change
    outcomes = getattr(change, field)
    trouble = [o for o in outcomes if o.outcome not in _SUCCEEDED]
    fine = [o for o in outcomes if o.outcome in _SUCCEEDED]

    if isinstance(change, ThreadLabelChange) and field == "messages":
        more = "mg_get_thread shows every message of the thread with its labels"
    else:
        more = f"the same call with fewer {'thread_ids' if field == 'threads' else 'message_ids'} lists each outcome"

    def result_for(count: int) -> Change:
        shown = fine[: count - 1] if count else []
        left = len(fine) - len(shown)
        how = f"The {left} left out all succeeded (changed or already, counted in succeeded); {more}"
        entry = budget.Cut(field=field, shown=len(trouble) + len(shown), total=len(outcomes), how_to_get_the_rest=how)
        page = change.model_copy(update={field: trouble + shown, f"{field}_omitted": left})
        return budget.with_cuts(page, entry) if left else page

    # count - 1 successes: a page of "none" is one item here, so no success at all can be the answer.
    return budget.fit_page(result_for, len(fine) + 1)


async def label_messages(
    runtime: Runtime,
    account_name: str,
    message_ids: list[str],
    label: str,
    *,
    add: bool,
    since: str | None = None,
) -> LabelChange:
    account = runtime.account(account_name)
    wanted = policy.check_message_label(account.name, label, account.processed_label, account.classification_labels)
    boundary = inputs.since(since) if since is not None else None  # a bad date refuses before any labelling
    ids, empty = _unique_ids(message_ids)
    if not ids and not empty:
        raise invalid_input("No Message-ID was given.")
    return await in_session(
        runtime, account, lambda s: _label_messages(runtime, s, account, ids, empty, wanted, add, boundary)
    )


# ------------------------------------------------------------------ threads


def _classifications(account: Account, items: dict[int, Fetched]) -> list[str]:
    present = {lb.casefold() for item in items.values() for lb in item.labels or ()}
    return sorted(name for name in account.classification_labels if name.casefold() in present)


def _label_threads(
    runtime: Runtime,
    session: ImapSession,
    account: Account,
    threads: list[int],
    label: str,
    add: bool,
    *,
    single: bool,
) -> ThreadLabelChange:
    """Label (or unlabel) many threads with the same commands one thread would take."""
    steps = progress.Steps(3 if add else 2)  # found, labelled (and read back), other classifications off
    session.open(ALL_MAIL, writable=True)
    uids = session.search(or_tree(threads))
    if not uids and single:
        raise not_found(
            f'No thread {threads[0]} in mailbox "{account.name}". Thread ids come from mg_next_pass or '
            "mg_search_threads."
        )
    before = session.fetch(uids, ["X-GM-THRID", "ENVELOPE", "X-GM-LABELS"])
    members: dict[int, list[int]] = {thread: [] for thread in threads}
    for uid in uids:
        item = before.setdefault(uid, Fetched(uid=uid))
        if item.thread_id in members:
            members[item.thread_id].append(uid)
    uids = [uid for thread in threads for uid in members[thread]]  # nothing outside the asked threads
    ids = {uid: _message_id(before[uid]) for uid in uids}
    steps.step(f"found {len(uids)} messages in {sum(1 for t in threads if members[t])} of {len(threads)} threads")
    created = ensure_label(session, label) if add and uids else False
    others: list[str] = []
    if add and uids:
        wanted = label.casefold()
        configured = {c.casefold() for c in account.classification_labels}
        others = sorted(
            {
                lb
                for uid in uids
                for lb in before[uid].labels or ()
                if lb.casefold() != wanted and lb.casefold() in configured
            }
        )
    recorder = undo.Recorder(runtime, account, "mg_label_thread" if add else "mg_unlabel_thread", session)
    # The new classification goes on first, the old ones come off after, and only where the new one
    # was read back: an interruption or a message Gmail would not change keeps a classification.
    mine = {uid: before[uid] for uid in uids}
    applied = apply_label(session, mine, ids, label, add=add, recorder=recorder, replaced=others)
    after = applied.after
    steps.step(f'label "{label}" {"set on" if add else "taken off"} {len(uids)} messages and read back')
    if add and uids:
        steps.step(f"other classifications taken off: {', '.join(others) or 'none there'}")
    outcomes: list[ThreadOutcome] = []
    messages: list[LabelOutcome] = []
    for thread in threads:
        own = members[thread]
        if not own:
            outcomes.append(
                ThreadOutcome(
                    thread_id=str(thread),
                    outcome="not_found",
                    detail=f'No thread {thread} in mailbox "{account.name}".',
                    classification_before=[],
                    classification_after=[],
                    replaced=[],
                    messages=0,
                    failed_messages=0,
                )
            )
            continue
        results = [applied.outcomes[uid] for uid in own]
        messages.extend(results)
        failed = sum(1 for m in results if m.outcome not in _SUCCEEDED)
        still = {lb.casefold() for uid in own for lb in (after.get(uid) or Fetched(uid=uid)).labels or ()}
        present = {lb.casefold() for uid in own for lb in before[uid].labels or ()}
        replaced = sorted({_configured(account, lb) for lb in others if lb.casefold() in present - still})
        changed = any(m.outcome == "changed" for m in results) or bool(replaced)
        outcomes.append(
            ThreadOutcome(
                thread_id=str(thread),
                outcome="failed" if failed else ("changed" if changed else "already"),
                detail=next((m.detail for m in results if m.detail), None),
                classification_before=_classifications(account, {uid: before[uid] for uid in own}),
                classification_after=_classifications(
                    account, {uid: after.get(uid) or Fetched(uid=uid) for uid in own}
                ),
                replaced=replaced,
                messages=len(own),
                failed_messages=failed,
            )
        )
    first = outcomes[0]
    change = fit_outcomes(
        ThreadLabelChange(
            **_counts(account, label, add, created, messages),
            messages=messages if single else [m for m in messages if m.outcome == "failed"],
            thread_id=first.thread_id if single else None,
            classification_before=first.classification_before if single else [],
            classification_after=first.classification_after if single else [],
            replaced=first.replaced if single else [],
            threads=outcomes,
            undo_token=recorder.token,
            changes=[want.entry() for want in applied.wants],
        )
    )
    return fit_outcomes(change, "threads")


def _message_id(item: Fetched) -> str | None:
    return item.envelope.message_id if item.envelope else None


def _configured(account: Account, label: str) -> str:
    for name in account.classification_labels:
        if name.casefold() == label.casefold():
            return name
    return label


MAX_THREADS = 100


def _thread_list(thread_id: str | None, thread_ids: list[str] | None) -> list[int]:
    if (thread_id is None) == (thread_ids is None):
        raise invalid_input("Give either thread_id (one thread) or thread_ids (a list), not both and not neither.")
    if thread_ids is None:
        assert thread_id is not None
        return [inputs.thread_id(thread_id)]
    if not thread_ids:
        raise invalid_input("thread_ids is empty: give at least one thread id.")
    if len(thread_ids) > MAX_THREADS:
        raise invalid_input(f"At most {MAX_THREADS} thread ids per call; split the batch.")
    return list(dict.fromkeys(inputs.thread_id(t) for t in thread_ids))  # every id checked before any change


async def label_thread(
    runtime: Runtime,
    account_name: str,
    thread_id: str | None,
    label: str,
    *,
    add: bool,
    thread_ids: list[str] | None = None,
) -> ThreadLabelChange:
    account = runtime.account(account_name)
    wanted = policy.check_thread_label(account.name, label, account.processed_label, account.classification_labels)
    threads = _thread_list(thread_id, thread_ids)
    single = thread_ids is None
    return await in_session(
        runtime, account, lambda s: _label_threads(runtime, s, account, threads, wanted, add, single=single)
    )


# ------------------------------------------------------------------ flags


def _set_flags(
    runtime: Runtime, session: ImapSession, account: Account, bare: str, wanted: dict[str, bool]
) -> FlagsResult:
    session.open(ALL_MAIL, writable=True)
    uid, _copies = find_message(session, account, bare)
    before = session.fetch([uid], ["FLAGS", "X-GM-MSGID"]).get(uid)
    if before is None:
        raise not_found(f'The message <{bare}> disappeared from mailbox "{account.name}" while being changed.')
    flags_before = list(before.flags or ())
    add = [policy.imap_flag(n) for n, on in wanted.items() if on and not carries(flags_before, policy.imap_flag(n))]
    remove = [policy.imap_flag(n) for n, on in wanted.items() if not on and carries(flags_before, policy.imap_flag(n))]
    recorder = undo.Recorder(runtime, account, "mg_set_flags", session)
    wants = [writes.Want("flag", policy.imap_flag(n), on, [uid]) for n, on in wanted.items()]
    after = writes.apply(session, {uid: before}, wants, recorder=recorder).get(uid)
    accepted = not any(want.refused for want in wants)
    flags_after = list(after.flags or ()) if after else []
    missed = [n for n, on in wanted.items() if carries(flags_after, policy.imap_flag(n)) is not on]
    if missed:
        what = "refused the flag change" if not accepted else "accepted the flag change but did not apply it"
        from ...errors import MailError

        raise MailError(
            "upstream_error",
            f"Gmail {what} for {', '.join(missed)} on <{bare}>. Flags now: {', '.join(sorted(flags_after)) or 'none'}.",
            retryable=True,
        )
    changed_names = {policy.imap_flag(n).casefold(): n for n in wanted}
    changed = sorted(changed_names[f.casefold()] for f in add + remove)
    return FlagsResult(
        account=account.name,
        message_id=bare,
        uid=uid,
        flags_before=sorted(flags_before),
        flags_after=sorted(flags_after),
        changed=changed,
        already_set=sorted(n for n in wanted if n not in changed),
        undo_token=recorder.token,
        changes=[want.entry() for want in wants],
    )


async def set_flags(
    runtime: Runtime,
    account_name: str,
    message_id: str,
    seen: bool | None,
    flagged: bool | None,
    answered: bool | None,
) -> FlagsResult:
    account = runtime.account(account_name)
    wanted = policy.check_flags(seen, flagged, answered)
    bare = inputs.message_id(message_id)
    return await in_session(runtime, account, lambda s: _set_flags(runtime, s, account, bare, wanted))
