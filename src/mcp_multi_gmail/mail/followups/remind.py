"""mg_remind: set, move or clear a thread's reminder, or mark it as expecting nothing.

The labels and how they are written are `reminding.threads`'s (docs/pripominky.md).
"""

from __future__ import annotations

from collections.abc import Callable

from ...errors import invalid_input
from ...policy import reminders as family
from ...runtime import Runtime
from ..core import inputs
from ..core.session import in_session
from ..reminding import RemindResult, change_thread


async def remind(
    runtime: Runtime,
    account_name: str,
    thread_id: str,
    on: str | None,
    kind: str,
    clear: bool,
    expect_nothing: bool,
) -> RemindResult:
    account = runtime.account(account_name)
    parent = account.reminder_label
    family.check_parent(account.name, parent, account.processed_label, account.classification_labels)
    thread = inputs.thread_id(thread_id)
    if sum((on is not None, clear, expect_nothing)) != 1:
        raise invalid_input(
            "Give exactly one of: on (a date), clear: true, or expect_nothing: true. Nothing was changed."
        )
    add: str | None = None
    drop: Callable[[str], bool]
    if on is not None:
        reminder = family.check_on(on, family.check_kind(kind), runtime.config.zone, runtime.clock())
        add = family.label_name(parent, reminder)

        def drop(lb: str) -> bool:  # the thread's other dates; a reply reminder also ends "expect nothing"
            return family.parse_label(parent, lb) is not None or (
                reminder.kind == "reply" and family.is_expect_nothing(parent, lb)
            )
    elif expect_nothing:
        add = family.expect_nothing_label(parent)

        def drop(lb: str) -> bool:
            found = family.parse_label(parent, lb)
            return found is not None and found.kind == "reply"
    else:

        def drop(lb: str) -> bool:
            return family.is_family(parent, lb)

    return await in_session(
        runtime, account, lambda s: change_thread(runtime, s, account, thread, add, drop, "mg_remind")
    )
