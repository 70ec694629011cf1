"""Work on a mailbox's IMAP connection, and on one mailbox or on all of them at once.

Every service function reaches Gmail through `in_session`. The tools that take `"all"` (search
and the pass) ask every mailbox at the same time through `each_mailbox`: a mailbox that fails is
reported beside the others' answers instead of failing the whole call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from pydantic import BaseModel

from ... import progress
from ...config import Account
from ...errors import MailError
from ...gmail import imap
from ...gmail.imap import ImapSession
from ...runtime import Runtime

T = TypeVar("T")

logger = logging.getLogger(__name__)


class SearchFailure(BaseModel):
    account: str
    code: str
    message: str


async def in_session(runtime: Runtime, account: Account, work: Callable[[ImapSession], T]) -> T:
    """Run `work` on one of the mailbox's IMAP connections (in a worker thread) and return its result."""
    return await imap.run_on_worker(
        account.name,
        account.address,
        account.login,
        runtime.endpoint,
        work,
        connections=runtime.worker_threads(),
        max_connections=account.max_connections,
    )


@dataclass
class Answers(Generic[T]):
    """What the mailboxes answered: results and names in configuration order, and the failures."""

    done: list[T] = field(default_factory=list)
    searched: list[str] = field(default_factory=list)
    failures: list[SearchFailure] = field(default_factory=list)


async def each_mailbox(runtime: Runtime, account_name: str, work: Callable[[ImapSession, Account], T]) -> Answers[T]:
    """Run `work` on one mailbox, or on every mailbox at once for "all".

    One mailbox: its error is the call's error. "all": a mailbox that fails becomes a failure
    entry and the others still answer. A failure that is not a `MailError` is a bug or an
    unforeseen library error: it is logged with its traceback (stderr) and reported as
    upstream_error.
    """
    accounts = runtime.accounts_for(account_name)

    async def one(account: Account) -> T:
        return await in_session(runtime, account, lambda session: work(session, account))

    if account_name != "all":
        [account] = accounts
        return Answers([await one(account)], [account.name])

    answered: list[str] = []

    async def reported(account: Account) -> T:
        try:
            return await one(account)
        finally:
            # Each mailbox of "all" that answered (or failed) is one step, for a client that asked.
            answered.append(account.name)
            progress.report(len(answered), len(accounts), f'mailbox "{account.name}" done')

    outcomes = await asyncio.gather(*(reported(a) for a in accounts), return_exceptions=True)
    answers: Answers[T] = Answers()
    for account, outcome in zip(accounts, outcomes, strict=True):
        if isinstance(outcome, MailError):
            answers.failures.append(SearchFailure(account=account.name, code=outcome.code, message=outcome.message))
        elif isinstance(outcome, BaseException):
            logger.error("mailbox %s failed unexpectedly", account.name, exc_info=outcome)
            answers.failures.append(SearchFailure(account=account.name, code="upstream_error", message=str(outcome)))
        else:
            answers.done.append(outcome)
            answers.searched.append(account.name)
    return answers
