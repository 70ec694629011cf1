"""The pass and the labelling tools: next pass, (un)label message and thread, set flags."""

from __future__ import annotations

from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from ..mail import labels, pass_
from ..mail.results import FlagsResult, LabelChange, PassResult, ThreadLabelChange
from ..runtime import Runtime
from .arguments import MAX_LABEL, MAX_TOKEN, Count, Identifier, Identifiers, OptionalFlag
from .common import READ_ONLY, AccountName, AccountOrAll, structured_errors, within_deadline

WRITE = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)
Since = Annotated[
    str,
    Field(
        max_length=MAX_TOKEN,
        description="The boundary: YYYY-MM-DD (that calendar day, UTC), an ISO 8601 time (no offset = UTC) or "
        'an RFC 2822 date; e.g. "2026-09-30"',
    ),
]
MessageIds = Annotated[
    Identifiers,
    Field(description="Message-IDs (with or without angle brackets), all messages looked at in one call"),
]
Label = Annotated[str, Field(max_length=MAX_LABEL, description="Label name exactly as configured")]
ThreadId = Annotated[Identifier, Field(description="Gmail thread id from mg_next_pass or mg_search_threads")]


def register(server: MCPServer, runtime: Runtime) -> None:
    @server.tool(name="mg_next_pass", title="Next pass over new mail", annotations=READ_ONLY)
    @structured_errors
    @within_deadline(runtime)
    async def mg_next_pass(
        account: AccountOrAll,
        since: Since,
        max_threads: Annotated[Count, Field(ge=1, le=100, description="Threads per page (1-100)")] = 25,
        page_token: Annotated[
            str | None,
            Field(
                max_length=MAX_TOKEN,
                description="next_page_token of the previous page; never reuse one after labelling",
            ),
        ] = None,
    ) -> PassResult:
        """Threads with unprocessed work delivered since the boundary: everything in All Mail without
        the processed label, nothing else (there is deliberately no query). Drafts and scheduled mail
        are listed as pending_outgoing, never as work. Work one mailbox at a time with its own
        boundary ("all" gives one window for all). Read a thread with mg_get_thread when
        message_count is null or larger than what is shown. Label every message you looked at, noise
        included, with mg_label_message in one call (pass `since` on the last one). Move the boundary
        to searched_at only when window_clear is true."""
        return await pass_.next_pass(runtime, account, since, max_threads, page_token)

    @server.tool(name="mg_label_message", title="Mark messages as processed", annotations=WRITE)
    @structured_errors
    @within_deadline(runtime)
    async def mg_label_message(
        account: AccountName,
        message_ids: MessageIds,
        label: Label,
        since: Annotated[
            str | None,
            Field(
                max_length=MAX_TOKEN,
                description="Optional pass boundary: the result then includes the window as a new pass sees it",
            ),
        ] = None,
    ) -> LabelChange:
        """Put the processed label on messages (only the processed label: classifications belong on
        threads). Per-message outcome changed/already/not_found/failed; repeating the call is safe,
        done ones return already. Call again with the same ids when some failed."""
        return await labels.label_messages(runtime, account, message_ids, label, add=True, since=since)

    @server.tool(name="mg_unlabel_message", title="Remove the processed label", annotations=WRITE)
    @structured_errors
    @within_deadline(runtime)
    async def mg_unlabel_message(account: AccountName, message_ids: MessageIds, label: Label) -> LabelChange:
        """Take the processed label off messages, so the next pass shows them again."""
        return await labels.label_messages(runtime, account, message_ids, label, add=False)

    @server.tool(name="mg_label_thread", title="Classify a thread", annotations=WRITE)
    @structured_errors
    @within_deadline(runtime)
    async def mg_label_thread(account: AccountName, thread_id: ThreadId, label: Label) -> ThreadLabelChange:
        """Set the thread's classification: the label goes on every message of the thread, then every
        other configured classification comes off, in this one call. Only configured classification
        labels; never the processed label (Gmail puts a thread label on later replies too)."""
        return await labels.label_thread(runtime, account, thread_id, label, add=True)

    @server.tool(name="mg_unlabel_thread", title="Unclassify a thread", annotations=WRITE)
    @structured_errors
    @within_deadline(runtime)
    async def mg_unlabel_thread(account: AccountName, thread_id: ThreadId, label: Label) -> ThreadLabelChange:
        """Leave a thread unclassified. To change a classification call mg_label_thread with the new one."""
        return await labels.label_thread(runtime, account, thread_id, label, add=False)

    @server.tool(name="mg_set_flags", title="Set read / star / answered", annotations=WRITE)
    @structured_errors
    @within_deadline(runtime)
    async def mg_set_flags(
        account: AccountName,
        message_id: Annotated[Identifier, Field(description="Message-ID, with or without angle brackets")],
        seen: Annotated[OptionalFlag, Field(description="Read (true) or unread (false)")] = None,
        flagged: Annotated[OptionalFlag, Field(description="Starred (true) or not (false)")] = None,
        answered: Annotated[OptionalFlag, Field(description="Answered flag")] = None,
    ) -> FlagsResult:
        """Set \\Seen, \\Flagged (the star) or \\Answered on one message, read back. Nothing else: no
        deleting, no draft flag. Give at least one."""
        return await labels.set_flags(runtime, account, message_id, seen, flagged, answered)
