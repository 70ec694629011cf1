"""What Gmail means when it refuses: a bad password, IMAP switched off, a demand to sign in on the
web, the daily transfer limit, or a passing condition (too many connections, an outage) that
waiting cures.

A credential failure and IMAP switched off are `auth_failed`, each with its own advice (a new app
password helps only the first); the watcher ends on both. Response codes: RFC 5530 (IMAP), RFC 3463
(SMTP enhanced status codes); Gmail's own texts: https://support.google.com/mail/answer/7126229,
https://support.google.com/mail/answer/78754 and, for the limits,
https://support.google.com/a/answer/1071518. The texts as recorded are listed in
packages/gmail-emulator/BEHAVIOURS.md.
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
# IMAP switched off: a Workspace domain's policy ("IMAP access is disabled for your domain") or a
# personal account's setting ("Your account is not enabled for IMAP use").
_IMAP_OFF = ("IMAP ACCESS IS DISABLED", "NOT ENABLED FOR IMAP")
# Gmail's transfer limit for the mailbox (Workspace: 2,500 MB of IMAP download and 500 MB of upload a
# day), as a tagged NO or an untagged BYE on any command. [THROTTLED] with the same words is a slow-down.
_OVERQUOTA_CODE = "[OVERQUOTA]"
_OVERQUOTA_TEXT = "ACCOUNT EXCEEDED COMMAND OR BANDWIDTH LIMITS"
THROTTLED = "[THROTTLED]"
# Transient conditions that can follow any command, not only LOGIN.
_TRANSIENT = ("[UNAVAILABLE]", "[THROTTLED]", "[INUSE]", "[LIMIT]", "TEMPORARY SYSTEM PROBLEM", "TRY AGAIN LATER")

WEB_LOGIN_ADVICE = (
    "The app password may well be right: Gmail wants the account owner to confirm this sign-in in a web "
    "browser first. Sign in to Gmail (https://mail.google.com) in a browser, preferably on the same "
    'network as this computer, answer any security alert from Google with "Yes, it was me" '
    "(https://myaccount.google.com/notifications), and try again. A new app password does not help here."
)


_NOT_THE_PASSWORD = "The app password is not the problem, and a new one does not help."
_WORKSPACE_IMAP = (
    "For a Google Workspace account the domain's administrator must allow IMAP for this user (Admin console: "
    "Apps, Google Workspace, Gmail, End User Access, POP and IMAP access; https://support.google.com/a/answer/105694)."
)
_PERSONAL_IMAP = (
    "For a personal Gmail account, turn IMAP on in Gmail's settings (See all settings, Forwarding and POP/IMAP, "
    "Enable IMAP) if that option is still there; since January 2025 Gmail keeps IMAP on for personal accounts."
)
# "…disabled for your domain" is Workspace's policy: only the administrator can change it.
IMAP_OFF_ADVICE = f"{_NOT_THE_PASSWORD} {_WORKSPACE_IMAP} {_PERSONAL_IMAP}"


def _quoted(reason: str) -> str:
    return f'Gmail answered "{reason}"' if reason else "Gmail gave no reason"


def _says(text: str, marks: tuple[str, ...]) -> bool:
    upper = text.upper()
    return any(mark in upper for mark in marks)


def is_transient(text: str) -> bool:
    """Gmail's passing conditions (an outage, throttling, a busy mailbox): waiting cures them."""
    return _says(text, _TRANSIENT)


def is_credential_failure(text: str) -> bool:
    return _says(text, _CREDENTIALS)


def is_web_login(text: str) -> bool:
    return _says(text, _WEB_LOGIN)


def is_imap_off(text: str) -> bool:
    return _says(text, _IMAP_OFF)


def is_overquota(text: str) -> bool:
    upper = text.upper()
    return _OVERQUOTA_CODE in upper or (_OVERQUOTA_TEXT in upper and THROTTLED not in upper)


def imap_off(account: str, reason: str) -> MailError:
    domain = "FOR YOUR DOMAIN" in reason.upper()
    advice = f"{_NOT_THE_PASSWORD} {_WORKSPACE_IMAP}" if domain else IMAP_OFF_ADVICE
    return MailError(
        "auth_failed",
        f'Mailbox "{account}": Gmail does not allow IMAP for this account ({reason}). {advice}',
        kind="imap_disabled",
    )


def overquota(account: str, reason: str, *, changed: bool = False) -> MailError:
    """Gmail's daily transfer limit for the mailbox: waiting minutes does not help, so not retryable."""
    if changed:
        what = (
            "The refused command changed nothing, but a change sent earlier in this call may have been made: "
            "read the current state once the limit has reset."
        )
    else:
        what = "Nothing was changed."
    return MailError(
        "upstream_error",
        f'Mailbox "{account}": Gmail stopped serving this mailbox over IMAP ({reason}): it has used up Gmail\'s '
        "transfer limit for the mailbox (Google Workspace: 2,500 MB downloaded and 500 MB uploaded a day). The "
        f"limit resets within 24 hours; trying again sooner does not help. {what} Other mailboxes are not "
        "affected.",
        kind="overquota",
    )


def bye_refused(account: str, reason: str, *, changed: bool = False) -> MailError | None:
    """The error for one of Gmail's refusals that end the whole call (the transfer limit, IMAP
    switched off), which an untagged BYE or a tagged NO can carry; None for anything else (a BYE
    then is a dropped connection, retryable as such)."""
    if is_overquota(reason):
        return overquota(account, reason, changed=changed)
    if is_imap_off(reason):
        return imap_off(account, reason)
    return None


def login_refused(account: str, reason: str, *, web_alert: bool = False) -> MailError:
    """The error for an IMAP LOGIN that Gmail answered with NO (`web_alert`: an untagged
    `* NO [WEBALERT …]` came first)."""
    upper = reason.upper()
    if is_credential_failure(reason):
        return MailError("auth_failed", f'Mailbox "{account}": {reason}')
    if is_imap_off(reason):
        return imap_off(account, reason)
    if web_alert or is_web_login(reason):
        return MailError(
            "upstream_error",
            f'Mailbox "{account}": Gmail blocked the login ({reason}). {WEB_LOGIN_ADVICE}',
            kind="web_login",
        )
    if is_overquota(reason):
        return overquota(account, reason)
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


def command_refused(account: str, reason: str, *, changed: bool = False) -> MailError:
    """The error for any other IMAP command Gmail answered with NO or BAD."""
    stopped = bye_refused(account, reason, changed=changed)
    if stopped is not None:
        return stopped
    if is_transient(reason):
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
            kind="web_login",
        )
    return MailError(
        "upstream_error",
        f'Mailbox "{account}": Gmail refused the SMTP login for now ({reason}). The password was not '
        "rejected. Nothing was sent; try again in a few minutes.",
        retryable=True,
    )
