"""The "one mailbox or all" fan-out: every mailbox answers, a failing one is reported and logged."""

from __future__ import annotations

import logging

import pytest

from mcp_multi_gmail.config import Account
from mcp_multi_gmail.errors import MailError
from mcp_multi_gmail.gmail.imap import ALL_MAIL, ImapSession
from mcp_multi_gmail.mail.core.session import each_mailbox
from mcp_multi_gmail.runtime import Runtime

pytestmark = pytest.mark.anyio


def mail_count(session: ImapSession, account: Account) -> tuple[str, int]:
    session.open(ALL_MAIL)
    return account.name, len(session.search(["ALL"]))


async def test_all_mailboxes_answer_in_configuration_order(demo: Runtime) -> None:
    answers = await each_mailbox(demo, "all", mail_count)
    names = [a.name for a in demo.config.accounts]
    assert answers.searched == names and [name for name, _ in answers.done] == names
    assert all(size > 0 for _, size in answers.done) and answers.failures == []


async def test_an_unexpected_error_in_one_mailbox_is_reported_and_logged(
    demo: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    def broken_for_tym(session: ImapSession, account: Account) -> tuple[str, int]:
        if account.name == "tym":
            raise RuntimeError("bug in the tym branch")
        return mail_count(session, account)

    with caplog.at_level(logging.ERROR, logger="mcp_multi_gmail"):
        answers = await each_mailbox(demo, "all", broken_for_tym)
    assert "tym" not in answers.searched and len(answers.done) == len(demo.config.accounts) - 1
    [failure] = answers.failures
    assert (failure.account, failure.code, failure.message) == ("tym", "upstream_error", "bug in the tym branch")
    [record] = [r for r in caplog.records if r.name == "mcp_multi_gmail.mail.core.session"]
    assert "tym" in record.getMessage() and record.exc_info is not None
    assert isinstance(record.exc_info[1], RuntimeError)


async def test_a_mail_error_is_reported_without_a_traceback(demo: Runtime, caplog: pytest.LogCaptureFixture) -> None:
    def refused_for_tym(session: ImapSession, account: Account) -> tuple[str, int]:
        if account.name == "tym":
            raise MailError("not_found", "nothing here")
        return mail_count(session, account)

    with caplog.at_level(logging.ERROR, logger="mcp_multi_gmail"):
        answers = await each_mailbox(demo, "all", refused_for_tym)
    [failure] = answers.failures
    assert (failure.account, failure.code) == ("tym", "not_found")
    assert not [r for r in caplog.records if r.name == "mcp_multi_gmail.mail.core.session"]


async def test_one_mailbox_fails_the_call_with_its_own_error(demo: Runtime) -> None:
    def refused(session: ImapSession, account: Account) -> None:
        raise MailError("not_found", "nothing here")

    with pytest.raises(MailError) as info:
        await each_mailbox(demo, "osobni", refused)
    assert info.value.code == "not_found"
    answers = await each_mailbox(demo, "osobni", mail_count)
    assert answers.searched == ["osobni"] and answers.done[0][0] == "osobni"
