"""Work at the scale of a mailbox: mg_sweep (a change over a query, behind a preview) and mg_undo."""

from __future__ import annotations

from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from ...mail.bulk import SweepResult, sweep
from ...mail.undo import UndoResult, restore
from ...runtime import Runtime
from .arguments import MAX_LABEL, MAX_QUERY, OptionalFlag, Token
from .common import AccountName, Registrar

# A sweep's apply and an undo each change many messages; the same call again is refused (one-use tokens).
ONCE = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True)


class Change(BaseModel):
    """Exactly one of the four."""

    model_config = ConfigDict(extra="forbid")

    add_label: Annotated[
        str | None, Field(max_length=MAX_LABEL, description="The processed label or a classification")
    ] = None
    remove_label: Annotated[
        str | None, Field(max_length=MAX_LABEL, description="The processed label or a classification")
    ] = None
    seen: Annotated[OptionalFlag, Field(description="Read (true) or unread (false)")] = None
    flagged: Annotated[OptionalFlag, Field(description="Starred (true) or not (false)")] = None


def register(tool: Registrar, runtime: Runtime) -> None:
    @tool(name="mg_sweep", title="Change everything a query matches", annotations=ONCE)
    async def mg_sweep(
        account: AccountName,
        query: Annotated[str, Field(max_length=MAX_QUERY, description="Gmail search, as in mg_search_threads")],
        change: Annotated[
            Change,
            Field(
                description='Exactly one: {"add_label": L}, {"remove_label": L}, {"seen": bool} or {"flagged": bool}'
            ),
        ],
        confirm_token: Annotated[
            Token | None, Field(description="From the preview: applies exactly what it showed (15 minutes, once)")
        ] = None,
    ) -> SweepResult:
        """One change over every message a Gmail query matches, instead of paging a search and labelling in
        batches. change is one of add_label/remove_label (the processed label on messages; a classification
        on every message of the matched threads, taking the other classifications off, as mg_label_thread),
        seen, flagged. Without confirm_token it only previews: counts, a sample of 10 threads, confirm_token
        and the undo_token the apply will return. Show the user the count and the sample before applying.
        The apply searches again and changes only previewed messages that still match; partial success
        lists `failed`. At most sweep_limit messages (query_too_broad: narrow the query).
        Rules (Czech): guide://mcp-multi-gmail/hromadne."""
        return await sweep.sweep(runtime, account, query, change.model_dump(), confirm_token)

    @tool(name="mg_undo", title="Undo a write", annotations=ONCE)
    async def mg_undo(
        account: AccountName,
        undo_token: Annotated[Token, Field(description="The undo_token of a write tool's result")],
    ) -> UndoResult:
        """Take back exactly what one write changed (labels, flags, a trash, a sweep), per message and per
        attribute: a label a message had before stays. What someone changed since is left alone and
        counted in `skipped`. A token works once, for 7 days, also after a restart.
        Rules (Czech): guide://mcp-multi-gmail/vraceni."""
        return await restore.undo_write(runtime, account, undo_token)
