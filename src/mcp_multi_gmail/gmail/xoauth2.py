"""Logging in with XOAUTH2 (https://developers.google.com/gmail/imap/xoauth2-protocol) for a mailbox
with "auth": "oauth", on IMAP (imapclient's `oauth2_login`) and SMTP (aiosmtplib's `auth_xoauth2`).

The access token comes from oauth/tokens.py, refreshed before it ends. When Gmail still refuses a
token that was in date (revoked meanwhile, or the clocks disagree), the token is refreshed once and
the login tried once more; a second refusal is the user's to fix and says how.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from ..config import SignIn
from ..errors import MailError
from ..oauth.advice import sign_in_command
from ..oauth.tokens import access_token
from .refusals import smtp_login_refused

if TYPE_CHECKING:
    import aiosmtplib


def _still_refused(sign_in: SignIn, refusal: MailError) -> MailError:
    return MailError(
        "auth_failed",
        f"{refusal.message} (XOAUTH2, refused again with a freshly refreshed token: Google has ended this "
        f'sign-in). Ask the user to sign mailbox "{sign_in.name}" in again in their own terminal: '
        f"{sign_in_command(sign_in.client.config, sign_in.name)}",
    )


def imap_login(sign_in: SignIn, tls: ssl.SSLContext, attempt: Callable[[str], None]) -> None:
    """`attempt(token)` logs in with one access token, raising the translated MailError."""
    token = access_token(sign_in, tls)
    try:
        attempt(token)
        return
    except MailError as refusal:
        if refusal.code != "auth_failed" or refusal.kind is not None:
            raise  # the network, IMAP switched off, a limit: a new token does not help
        first = refusal
    retried = access_token(sign_in, tls, refused=token)
    try:
        attempt(retried)
    except MailError as refusal:
        if refusal.code == "auth_failed" and refusal.kind is None:
            raise _still_refused(sign_in, first) from None
        raise


async def _token(sign_in: SignIn, tls: ssl.SSLContext, refused: str | None = None) -> str:
    # The refresh may wait for the file lock and Google: on a thread of asyncio's own executor,
    # never on the event loop and never in the pool the stdio transport reads with.
    try:
        return await asyncio.get_running_loop().run_in_executor(
            None, partial(access_token, sign_in, tls, refused=refused)
        )
    except MailError as error:  # before AUTH: nothing can have been sent
        raise MailError(
            error.code, f"{error.message} Nothing was sent.", retryable=error.retryable, kind=error.kind
        ) from None


async def smtp_login(client: aiosmtplib.SMTP, sign_in: SignIn, tls: ssl.SSLContext) -> None:
    """AUTH XOAUTH2; a 535 for an in-date token: one refresh, one retry, then auth_failed naming the
    sign-in command. Other refusals raise aiosmtplib's error, as a password login's do."""
    import aiosmtplib

    token = await _token(sign_in, tls)
    try:
        await client.auth_xoauth2(sign_in.address, token)
        return
    except aiosmtplib.SMTPAuthenticationError as error:
        if error.code != 535:
            raise
    retried = await _token(sign_in, tls, refused=token)
    try:
        await client.auth_xoauth2(sign_in.address, retried)
    except aiosmtplib.SMTPAuthenticationError as error:
        if error.code != 535:
            raise
        refusal = smtp_login_refused(sign_in.name, error.code, error.message)
        raise _still_refused(sign_in, refusal) from None


async def smtp_authenticate(client: aiosmtplib.SMTP, address: str, login: str | SignIn, tls: ssl.SSLContext) -> None:
    """Log in with an app password or with the sign-in, whichever the mailbox has."""
    if isinstance(login, SignIn):
        await smtp_login(client, login, tls)
    else:
        await client.login(address, login)
