"""The watcher's real check: the pass's own window scan over one IMAP session per mailbox."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

from ..config import Config
from ..errors import MailError
from ..gmail.endpoint import Endpoint
from ..gmail.imap import logged_in
from ..gmail.special_folders import SpecialFolders
from ..mail.reminding import due_keys
from ..mail.work import scan_window

# mailbox name, boundary → keys of the work messages in its window (raises MailError)
Check = Callable[[str, datetime], set[str]]


def imap_check(config: Config, endpoint: Endpoint, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Check:
    """The real check: one IMAP session per mailbox and round, the pass's own window scan, and the
    reminders due (mail/reminding/due.py: their keys start with DUE_KEY_PREFIX)."""
    folders = SpecialFolders()  # looked up once per mailbox for the watcher's whole run

    def check(name: str, since: datetime) -> set[str]:
        account = config.account(name)
        if account is None:  # plan_watch only lets configured names through
            raise MailError("account_unknown", f'No mailbox named "{name}".')
        with logged_in(account.name, account.address, account.login, endpoint, folders) as session:
            work = scan_window(session, account, since).work_keys()
            return work | due_keys(session, account, config.zone, now())

    return check
