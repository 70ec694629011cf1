"""mg_sweep: one label or flag change over everything a Gmail query matches, behind a preview.

Without a confirm_token a sweep only previews: it searches (X-GM-RAW, as mg_search_threads does),
reads every match's state by FETCH and writes nothing but its own record in the state folder:
the previewed message set, kept 15 minutes for the re-check, and the undo token the apply will
return. With the token it searches again and changes only the previewed messages that still
match: in batches of UIDs compressed to ranges, each read back by FETCH before the next goes out.
The undo record is written and fsync'd before the first STORE.

Gmail's search index lags behind changes and new mail, so the re-check can still count a message
as matching that stopped matching a moment ago (it was previewed, so the user saw it), and a new
message too recent for the index is neither counted nor touched. What to change is decided from
each message's FETCHed state, never from the index.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field

from ... import policy
from ...config import Account
from ...domain import Address
from ...errors import invalid_input
from ...gmail.imap import ALL_MAIL, Fetched, ImapSession
from ...gmail.parse.envelope import gmail_id
from ...policy import SweepChange
from ...runtime import Runtime
from .. import undo
from ..core import budget, inputs, writes
from ..core.lookup import ensure_label, or_tree
from ..core.session import in_session
from ..core.summary import carries, iso
from ..undo import records, tokens
from ..undo.record import hold_token
from ..undo.records import SWEEP_PREFIX, Records, new_token, parse_stamp, stamp

PREVIEW_FOR = timedelta(minutes=15)
SAMPLE = 10
MAX_FAILED_LISTED = 50
THREADS_PER_SEARCH = 100  # X-GM-THRID terms OR-ed into one SEARCH line (about 3 500 characters)
STATE_ITEMS = ["X-GM-THRID", "X-GM-MSGID", "X-GM-LABELS", "FLAGS", "INTERNALDATE"]
WHAT = "sweep"
USED = (
    "This confirm_token was used already: each applies its sweep once. Nothing was changed. To sweep again, "
    "preview again."
)
BUSY = "This confirm_token's sweep is being applied by another call now. Nothing was changed by this one."


class SweepThread(BaseModel):
    thread_id: str
    from_: Address | None = Field(alias="from", description="Sender of the thread's newest matching message")
    subject: str | None
    received_at: str | None = Field(description="INTERNALDATE of that message, ISO-8601 UTC")
    matched_messages: int

    model_config = {"populate_by_name": True}


class SweepFailure(BaseModel):
    message_id: str = Field(description="Message-ID, or the id shown for a message without one")
    reason: str


class SweepResult(BaseModel):
    account: str
    query: str
    applied: bool = Field(description="false: a preview, nothing was written; true: the change was applied")
    matched_messages: int = Field(description="Messages the sweep covers (a classification: all of each thread)")
    matched_threads: int
    would_change: int = Field(description="Covered messages not yet in the wanted state")
    already: int = Field(description="Covered messages already in the wanted state")
    sample: list[SweepThread] = Field(description=f"At most {SAMPLE} matched threads, newest first, to show the user")
    confirm_token: str | None = Field(description="Preview only: pass it back to apply (15 minutes, once)")
    expires_at: str | None = Field(description="When confirm_token expires, ISO-8601 UTC")
    changed: int | None = Field(description="Apply only: messages changed and read back")
    failed: int | None = Field(description="Apply only: messages the change did not take on (see failed_messages)")
    failed_messages: list[SweepFailure] = Field(description=f"At most {MAX_FAILED_LISTED}; `failed` is the total")
    left_since_preview: int | None = Field(
        description="Apply only: previewed messages that no longer match (untouched)"
    )
    new_since_preview: int | None = Field(description="Apply only: matches the preview did not show (untouched)")
    undo_token: str | None = Field(
        description="mg_undo takes the applied sweep back (7 days, once); the preview gives the same one in advance"
    )
    changes: list[writes.AttributeChange] = writes.changes_field(preview=True)
    cut: list[budget.Cut] = budget.cut_field()


# ------------------------------------------------------------------ what the sweep covers


def _covered(
    session: ImapSession, account: Account, query: str, change: SweepChange, *, writable: bool = False
) -> tuple[dict[int, Fetched], list[int]]:
    """Every message the sweep covers (UID -> state) and the UIDs the query itself matched."""
    session.open(ALL_MAIL, writable=writable)
    matched = session.search_raw(query)
    policy.check_sweep_size(account.name, len(matched), account.sweep_limit, threads=False)
    state = session.fetch(matched, STATE_ITEMS)
    if change.on_threads:
        threads = sorted({item.thread_id for item in state.values() if item.thread_id is not None})
        members: set[int] = set()
        for start in range(0, len(threads), THREADS_PER_SEARCH):
            members.update(session.search(or_tree(threads[start : start + THREADS_PER_SEARCH])))
        policy.check_sweep_size(account.name, len(members | set(state)), account.sweep_limit, threads=True)
        state.update(session.fetch(sorted(members - set(state)), STATE_ITEMS))
    return state, [uid for uid in matched if uid in state]


def _in_state(item: Fetched, change: SweepChange) -> bool:
    values = item.labels if change.attribute == "label" else item.flags
    return carries(values or (), change.name) is change.on


def _sample(session: ImapSession, state: dict[int, Fetched], matched: list[int]) -> list[SweepThread]:
    threads: dict[int, list[Fetched]] = {}
    for uid in matched:
        item = state[uid]
        threads.setdefault(item.thread_id or uid, []).append(item)

    def moment(item: Fetched) -> tuple[float, int]:
        return (item.internaldate.timestamp() if item.internaldate else 0.0, item.uid)

    newest = [(max(items, key=moment), len(items), thread) for thread, items in threads.items()]
    newest.sort(key=lambda entry: moment(entry[0]), reverse=True)
    shown = newest[:SAMPLE]
    envelopes = session.fetch([item.uid for item, _n, _t in shown], ["ENVELOPE"]) if shown else {}
    sample = []
    for item, count, thread in shown:
        envelope = envelopes.get(item.uid)
        env = envelope.envelope if envelope else None
        sample.append(
            SweepThread(
                thread_id=str(thread),
                from_=env.from_ if env else None,
                subject=env.subject if env else None,
                received_at=iso(item.internaldate),
                matched_messages=count,
            )
        )
    return sample


def _change_json(change: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in sorted(change.items()) if v is not None}


def _result(account: Account, query: str, state: dict[int, Fetched], **outcome: Any) -> SweepResult:
    """A sweep's result: the mailbox, the query and what it covers, with what this preview or apply found."""
    return SweepResult(
        account=account.name,
        query=query,
        matched_messages=len(state),
        matched_threads=len({item.thread_id for item in state.values()}),
        **outcome,
    )


# ------------------------------------------------------------------ preview


def _preview(
    runtime: Runtime, session: ImapSession, account: Account, query: str, given: dict[str, Any], change: SweepChange
) -> SweepResult:
    state, matched = _covered(session, account, query, change)
    already = sum(1 for item in state.values() if _in_state(item, change))
    would = writes.would(state, _wants(change, state))
    sample = _sample(session, state, matched)
    undo_token = undo.reserve(runtime, account, "mg_sweep")
    confirm = new_token(SWEEP_PREFIX)
    created = records.now()
    Records(runtime.state_folder()).create(
        confirm,
        {
            "kind": WHAT,
            "account": account.name,
            "query": query,
            "change": _change_json(given),
            "created": stamp(created),
            "expires": stamp(created + PREVIEW_FOR),
            "state": tokens.PLANNED,
            "undo_token": undo_token,
            "messages": [[item.gmail_msgid, uid] for uid, item in state.items() if item.gmail_msgid is not None],
        },
        WHAT,
    )
    return _result(
        account,
        query,
        state,
        applied=False,
        would_change=len(state) - already,
        already=already,
        sample=sample,
        confirm_token=confirm,
        expires_at=stamp(created + PREVIEW_FOR),
        changed=None,
        failed=None,
        failed_messages=[],
        left_since_preview=None,
        new_since_preview=None,
        undo_token=undo_token,
        changes=would,
    )


# ------------------------------------------------------------------ apply


def _claim(runtime: Runtime, account: Account, token: str, query: str, given: dict[str, Any]) -> dict[str, Any]:
    """The preview behind a confirm_token, held by this call: this mailbox's, this query and change, unused,
    within 15 minutes, held by no other call."""
    if not token.startswith(SWEEP_PREFIX):
        raise invalid_input("That is not a sweep confirm_token (they start with sweep_). Nothing was changed.")
    moment = records.now()

    def check(record: dict[str, Any]) -> str:
        if record.get("query") != query or record.get("change") != _change_json(given):
            raise invalid_input(
                "This confirm_token was given for another query or change: a sweep applies exactly what it previewed. "
                "Nothing was changed. Preview the new query or change first."
            )
        if tokens.state(record) == tokens.USED:
            raise invalid_input(USED)
        if moment >= parse_stamp(record["expires"]):
            raise invalid_input(
                f"This confirm_token expired at {record['expires']} (UTC), 15 minutes after its preview. Nothing was "
                "changed. Preview again and apply within 15 minutes."
            )
        return tokens.hold(record, busy=BUSY, used=USED)

    return hold_token(
        runtime,
        token,
        WHAT,
        account,
        check,
        not_this_kind="That token is not a sweep's confirm_token. Nothing was changed.",
        other_mailbox=f'This confirm_token was given for another mailbox, not "{account.name}". Nothing was changed.',
    )


def _wants(change: SweepChange, state: dict[int, Fetched], todo: list[int] | None = None) -> list[writes.Want]:
    """The change, and the classifications it replaces (off only where it was read back on)."""
    uids = sorted(state) if todo is None else todo
    wants = [writes.Want(change.attribute, change.name, change.on, uids)]  # type: ignore[arg-type]
    wants += [writes.Want("label", other, False, sorted(state), replaced_by=change.name) for other in change.replaces]
    return wants


class _Recorder(undo.Recorder):
    """The sweep's undo record; once it is written, and before the first STORE, the confirm_token is used."""

    def __init__(self, runtime: Runtime, account: Account, session: ImapSession, preview: dict[str, Any]) -> None:
        super().__init__(runtime, account, "mg_sweep", session, token=str(preview["undo_token"]))
        self.confirm, self.confirm_holder = str(preview["token"]), str(preview["holder"])
        self.used = False

    def plan(self, groups: list[undo.Group]) -> None:
        super().plan(groups)

        def used(record: dict[str, Any]) -> None:
            if tokens.holds(record, self.confirm_holder):
                tokens.use(record)

        Records(self.runtime.state_folder()).update(self.confirm, WHAT, used)
        self.used = True


def _apply(
    runtime: Runtime,
    session: ImapSession,
    account: Account,
    query: str,
    given: dict[str, Any],
    change: SweepChange,
    token: str,
) -> SweepResult:
    preview = _claim(runtime, account, token, query, given)
    preview["token"] = token
    recorder = _Recorder(runtime, account, session, preview)
    try:
        return _apply_claimed(session, account, query, change, preview, recorder)
    except BaseException:
        if not recorder.used:  # nothing went out: the preview can still be applied
            holder = str(preview["holder"])
            records.after_error(
                lambda: Records(runtime.state_folder()).update(token, WHAT, lambda r: tokens.let_go(r, holder)),
                "záznam náhledu hromadné změny",
            )
        raise


def _apply_claimed(
    session: ImapSession,
    account: Account,
    query: str,
    change: SweepChange,
    preview: dict[str, Any],
    recorder: _Recorder,
) -> SweepResult:
    previewed = {int(msgid) for msgid, _uid in preview["messages"]}
    state, _matched = _covered(session, account, query, change, writable=True)
    now_ids = {item.gmail_msgid: uid for uid, item in state.items() if item.gmail_msgid is not None}
    still = {uid: state[uid] for msgid, uid in now_ids.items() if msgid in previewed}
    todo = [uid for uid, item in still.items() if not _in_state(item, change)]
    wants = _wants(change, still, sorted(still))
    if change.attribute == "label" and change.on and todo:
        ensure_label(session, change.name)
    writes.apply(session, still, wants, recorder=recorder)
    reasons: dict[int, str] = {}
    for want in wants:
        for uid in want.failed:
            reasons.setdefault(uid, _reason(want))
    failures = _failures(session, reasons)
    cut = []
    if len(reasons) > len(failures):
        cut.append(
            budget.Cut(
                field="failed_messages",
                shown=len(failures),
                total=len(reasons),
                how_to_get_the_rest="Preview and apply the same sweep again: it changes only what is still to do.",
            )
        )
    return _result(
        account,
        query,
        state,
        applied=True,
        would_change=len(todo),
        already=len(still) - len(todo),
        sample=[],
        confirm_token=None,
        expires_at=None,
        changed=len(wants[0].changed),
        failed=len(reasons),
        failed_messages=failures,
        left_since_preview=len(previewed - set(now_ids)),
        new_since_preview=len(set(now_ids) - previewed),
        undo_token=recorder.token,
        changes=[want.entry() for want in wants],
        cut=cut,
    )


def _reason(want: writes.Want) -> str:
    what = f'the label "{want.name}"' if want.attribute == "label" else f"the flag {want.name}"
    state = "on" if want.on else "off"
    return f"Gmail accepted the change, but {what} was not {state} when the message was read back."


def _failures(session: ImapSession, reasons: dict[int, str]) -> list[SweepFailure]:
    shown = sorted(reasons)[:MAX_FAILED_LISTED]
    found = session.fetch(shown, ["ENVELOPE"]) if shown else {}
    result = []
    for uid in shown:
        item = found.get(uid)
        env = item.envelope if item else None
        shown_id = (
            env.message_id
            if env and env.message_id
            else (gmail_id(item.gmail_msgid) if item and item.gmail_msgid else str(uid))
        )
        result.append(SweepFailure(message_id=shown_id, reason=reasons[uid]))
    return result


async def sweep(
    runtime: Runtime, account_name: str, query: str, given: dict[str, Any], confirm_token: str | None
) -> SweepResult:
    account = runtime.account(account_name)
    change = policy.check_sweep_change(account.name, given, account.processed_label, account.classification_labels)
    query = inputs.search_query(query)
    if confirm_token is None:
        return await in_session(runtime, account, lambda s: _preview(runtime, s, account, query, given, change))
    token = confirm_token.strip()
    return await in_session(runtime, account, lambda s: _apply(runtime, s, account, query, given, change, token))
