"""mg_list_accounts and mg_reload_config."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import Field

from ...mail import accounts
from ...mail.accounts import ListAccountsResult, ReloadResult
from ...runtime import Runtime
from .arguments import Flag
from .common import READ_ONLY, Registrar

# Re-reads local files only: no mailbox is touched.
RELOAD = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


def register(tool: Registrar, runtime: Runtime, instructions: Callable[[], str]) -> None:
    """`instructions` builds the server instructions for the runtime as it is (the repair text in
    repair mode): a reload that changes them hands the new ones over, so one that ends repair mode
    always does."""

    @tool(name="mg_list_accounts", title="List the configured mailboxes", annotations=READ_ONLY)
    async def mg_list_accounts(
        verify: Annotated[
            Flag,
            Field(
                description="Also log in to every mailbox over IMAP and, for mailboxes that may send, "
                "probe the SMTP login (nothing is sent). Failures are listed per mailbox and check."
            ),
        ] = False,
    ) -> ListAccountsResult:
        """List every configured mailbox with its settings (never its password): short name, address,
        pass scope, the processed label and the classification labels with their meanings (choose a
        category by its meaning), sending rights, allowed recipients, signatures and aliases; also
        the start-up warnings (meanings too long for the {budget}-character result end in "…[cut]"; every
        mailbox is listed). With `verify: true` every login is checked at once; the outcome is in
        `failures`, beside the results, never instead of them. Never an error result, except
        `config_invalid` while the configuration has not loaded (repair mode)."""
        return await accounts.list_accounts(runtime, verify)

    @tool(name="mg_reload_config", title="Reload the configuration", annotations=RELOAD)
    async def mg_reload_config() -> ReloadResult:
        """Re-read the configuration file, the passwords file and the signature files. On any problem
        the running settings stay untouched and the error is `config_invalid`. When the reload changes
        the server instructions (first classification labels, a mailbox added) its result carries the
        new ones in `instructions`; mg_list_accounts shows the current state. In repair mode (the
        configuration did not load at start) a successful reload turns every tool on, no restart
        needed, and its result carries the instructions for the loaded configuration."""
        before = instructions()
        result = accounts.reload_config(runtime)
        now = instructions()
        if now != before:
            result.instructions = now
        return result
