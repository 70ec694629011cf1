"""What Gmail means when it refuses: a bad password, a demand to sign in on the web, or a passing
condition (too many connections, throttling, an outage) that waiting cures.

Only a credential failure is `auth_failed`: the advice for it (make a new app password) is wrong
for everything else, and the watcher ends on it. Response codes: RFC 5530 (IMAP), RFC 3463 (SMTP
enhanced status codes); Gmail's own texts: https://support.google.com/mail/answer/7126229 and
https://support.google.com/mail/answer/78754.
"""

from __future__ import annotations

from ..errors import MailError

# Gmail's answers to a wrong or revoked app password, and to the normal account password.
_CREDENTIALS = ("[AUTHENTICATIONFAILED]", "INVALID CREDENTIALS", "APPLICATION-SPECIFIC PASSWORD REQUIRED")
# Gmail wants the user to confirm the sign-in in a browser first (WEBALERT, SMTP 534 5.7.14).
# SMTP says it as 534 5.7.14 "Please log in via your web browser" or 534 5.7.9 "Please log in with your
# web browser" (…?p=WebLoginRequired).
_WEB_LOGIN = ("[WEBALERT", "WEB LOGIN REQUIRED", "WEBLOGINREQUIRED", "YOUR WEB BROWSER", "5.7.14")
_TOO_MANY = "TOO MANY SIMULTANEOUS CONNECTIONS"
# Transient conditions that can follow any command, not only LOGIN.
_TRANSIENT = ("[UNAVAILABLE]", "[THROTTLED]", "[INUSE]", "[LIMIT]", "TEMPORARY SYSTEM PROBLEM", "TRY AGAIN LATER")

WEB_LOGIN_ADVICE = (
    "The app password may well be right: Gmail wants the account owner to confirm this sign-in in a web "
    "browser first. Sign in to Gmail (https://mail.google.com) in a browser, preferably on the same "
    'network as this computer, answer any security alert from Google with "Yes, it was me" '
    "(https://myaccount.google.com/notifications), and try again. A new app password does not help here."
)


def _quoted(reason: str) -> str:
    return f'Gmail answered "{reason}"' if reason else "Gmail gave no reason"


def is_credential_failure(text: str) -> bool:
    upper = text.upper()
    return any(mark in upper for mark in _CREDENTIALS)


def is_web_login(text: str) -> bool:
    upper = text.upper()
    return any(mark in upper for mark in _WEB_LOGIN)


def login_refused(account: str, reason: str, *, web_alert: bool = False) -> MailError:
    """The error for an IMAP LOGIN that Gmail answered with NO (`web_alert`: an untagged
    `* NO [WEBALERT …]` came first)."""
    upper = reason.upper()
    if is_credential_failure(reason):
        return MailError("auth_failed", f'Mailbox "{account}": {reason}')
    if web_alert or is_web_login(reason):
        return MailError(
            "upstream_error", f'Mailbox "{account}": Gmail blocked the login ({reason}). {WEB_LOGIN_ADVICE}'
        )
    if _TOO_MANY in upper:
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": Gmail refused the login because too many connections to this account are '
            "open at once (Gmail allows about 15, shared with phones, desktop mail programs and other tools). "
            "The password is fine. Try again in a minute; if it keeps happening, close other programs that "
            "keep this mailbox open.",
            retryable=True,
        )
    if "[THROTTLED]" in upper:
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": Gmail is slowing this account down for now ({reason}), after a lot of '
            "IMAP traffic. The password is fine. Try again in a few minutes.",
            retryable=True,
        )
    if "[UNAVAILABLE]" in upper:
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": Gmail is temporarily unavailable ({reason}). The password is fine. Try '
            "again in a few minutes.",
            retryable=True,
        )
    return MailError(
        "upstream_error",
        f'Mailbox "{account}": Gmail refused the login with an answer that does not say the password is '
        f"wrong ({_quoted(reason)}). Try again in a few minutes; if it persists, sign in to Gmail in a web "
        "browser to see whether Google reports a problem with the account.",
        retryable=True,
    )


def command_refused(account: str, reason: str) -> MailError:
    """The error for any other IMAP command Gmail answered with NO or BAD."""
    upper = reason.upper()
    if any(mark in upper for mark in _TRANSIENT):
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": Gmail is temporarily unable to answer ({reason}). Nothing was changed by '
            "the refused command. Try again in a few minutes.",
            retryable=True,
        )
    return MailError("upstream_error", f'Mailbox "{account}": Gmail answered: {reason}')


def smtp_login_refused(account: str, code: int, text: str) -> MailError:
    """The error for an SMTP AUTH that Gmail refused; nothing was sent."""
    reason = f"{code} {text}".strip()
    if (code in (534, 535) and not is_web_login(text)) or is_credential_failure(text):
        return MailError(
            "auth_failed", f'Mailbox "{account}": Gmail refused the SMTP login ({reason}). Nothing was sent.'
        )
    if is_web_login(text):
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": Gmail blocked the SMTP login ({reason}). Nothing was sent. {WEB_LOGIN_ADVICE}',
        )
    return MailError(
        "upstream_error",
        f'Mailbox "{account}": Gmail refused the SMTP login for now ({reason}). The password was not '
        "rejected. Nothing was sent; try again in a few minutes.",
        retryable=True,
    )
