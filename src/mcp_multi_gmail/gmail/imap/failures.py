"""What a failed connection or a refused IMAP command means for the call: Gmail's own reason,
the error the caller sees, and which refusals end the whole call."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...errors import MailError
from ..refusals import bye_refused, is_imap_off, is_overquota
from .answers import text


def gmail_reason(error: Exception) -> str:
    """Gmail's own response text, without imapclient's "login failed:" wrapping."""
    said = text(error.args[0] if error.args else error)
    for prefix in ("login failed: ", "LOGIN command error: "):
        if said.lower().startswith(prefix.lower()):
            said = said[len(prefix) :]
    # imapclient says "fetch failed: <Gmail's text>", imaplib reports an untagged BYE as
    # "command: FETCH => <Gmail's text>".
    said = re.sub(r"^(?:[a-z_]+ failed: |command: [A-Za-z ]+ => )", "", said)
    if said.startswith(("b'", 'b"')) and said.endswith(("'", '"')):
        said = said[2:-1]
    return said.strip()


def network_error(account: str, error: BaseException, *, changed: bool = False) -> MailError:
    reason = text(error) or type(error).__name__
    if changed:
        # A command that changes the mailbox was on its way: Gmail may have carried it out.
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": the connection to Gmail broke ({reason}) after a change had been sent, so '
            "the change may or may not have been made. Read the current state before deciding what to do next.",
            retryable=True,
        )
    return MailError(
        "upstream_error",
        f'Mailbox "{account}": the connection to Gmail failed ({reason}). Try again in a moment.',
        retryable=True,
    )


def connection_broke(account: str, error: Exception, *, changed: bool = False) -> MailError:
    """The error for a connection that ended under a command: Gmail's BYE may say why (the daily
    transfer limit, IMAP switched off); otherwise it is the network, worth a retry."""
    said = bye_refused(account, gmail_reason(error), changed=changed)
    return said or network_error(account, error, changed=changed)


class TooManyConnections(MailError):
    """Gmail refused LOGIN because the account has too many IMAP connections open (the user's
    other clients hold them, or another program): worth one more try after a pause."""

    def __init__(self, refused: MailError) -> None:
        super().__init__(refused.code, refused.message, retryable=refused.retryable)


def too_many_connections(reason: str) -> bool:
    return "too many simultaneous connections" in reason.lower()


def raise_if_it_stops_the_call(error: Exception) -> None:
    """A refused write is normally one failed outcome (the caller reads the messages back), but
    Gmail's daily transfer limit and IMAP switched off end the whole call with their own advice."""
    reason = gmail_reason(error)
    if is_overquota(reason) or is_imap_off(reason):
        raise error


def accepted(command: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
    """Run a command whose refusal is an outcome, not a failure (a write; a FETCH with an item it
    can do without); False when Gmail refuses it (tagged NO/BAD), unless the refusal ends the
    whole call. A broken connection raises as it is."""
    from imapclient.exceptions import IMAPClientAbortError, IMAPClientError

    try:
        command(*args, **kwargs)
    except IMAPClientAbortError:
        raise
    except IMAPClientError as error:
        raise_if_it_stops_the_call(error)
        return False
    return True
