"""Gmail's fixed IMAP texts: the capability lists, the refusals, throttling and the goodbye.

Exact wording as Gmail sends it (observed, or cited in BEHAVIOURS.md where noted), shared by the
session (`imap_server`, which answers injected faults with them) and the command handlers.
"""

from __future__ import annotations

__all__ = [
    "APPEND_LIMIT",
    "BYE_FAULT",
    "CAPS_AFTER_AUTH",
    "CAPS_BEFORE_AUTH",
    "REFUSALS",
    "THROTTLED_SUFFIX",
    "THROTTLE_DELAY_S",
    "WEBALERT_LINE",
]

CAPS_BEFORE_AUTH = (
    "IMAP4rev1 UNSELECT IDLE NAMESPACE QUOTA ID XLIST CHILDREN X-GM-EXT-1 XYZZY SASL-IR "
    "AUTH=XOAUTH2 AUTH=PLAIN AUTH=PLAIN-CLIENTTOKEN AUTH=OAUTHBEARER"
)
APPEND_LIMIT = 35651584
CAPS_AFTER_AUTH = (
    "IMAP4rev1 UNSELECT IDLE NAMESPACE QUOTA ID XLIST CHILDREN X-GM-EXT-1 UIDPLUS COMPRESS=DEFLATE "
    "ENABLE MOVE CONDSTORE ESEARCH UTF8=ACCEPT LIST-EXTENDED LIST-STATUS LITERAL- SPECIAL-USE "
    f"APPENDLIMIT={APPEND_LIMIT}"
)
BYE_FAULT = b"* BYE Temporary System Problem. Try again later. (Failure)\r\n"
REFUSALS = {
    "invalid": "NO [AUTHENTICATIONFAILED] Invalid credentials (Failure)",
    "app_password": (
        "NO [ALERT] Application-specific password required: https://support.google.com/accounts/answer/185833 (Failure)"
    ),
    "too_many": "NO [ALERT] Too many simultaneous connections. (Failure)",
    "webalert": (
        "NO [ALERT] Please log in via your web browser: https://support.google.com/mail/accounts/answer/78754 (Failure)"
    ),
    # RFC 5530 code; Gmail's exact wording for it is not on record.
    "unavailable": "NO [UNAVAILABLE] Temporary System Error (Failure)",
    # Gmail's IMAP transfer limit, as reported during FETCH (BEHAVIOURS.md cites the reports).
    "overquota": "NO [OVERQUOTA] Account exceeded command or bandwidth limits.",
    # IMAP switched off: a Workspace domain's policy, and a personal account's setting (before 2025).
    "imap_disabled": (
        "NO [ALERT] IMAP access is disabled for your domain. Please contact your domain administrator for "
        "questions about this feature. (Failure)"
    ),
    "imap_not_enabled": (
        "NO [ALERT] Your account is not enabled for IMAP use. Please visit your Gmail settings page and enable "
        "your account for IMAP access. (Failure)"
    ),
}
# Gmail throttles by answering slowly and appending this to a successful tagged reply (`OK Success
# [THROTTLED]`), never (on record) by refusing: the `throttle` fault, and `refuse_login:throttled`.
THROTTLED_SUFFIX = " [THROTTLED]"
THROTTLE_DELAY_S = 1.0
# Gmail sends this untagged line before the tagged web-login refusal (the URL continues the sign-in).
WEBALERT_LINE = (
    b"* NO [WEBALERT https://accounts.google.com/signin/continue?sarp=1&scc=1&plt=EMULATOR] Web login required.\r\n"
)
