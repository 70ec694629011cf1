"""Typed tool errors: every refusal or failure a tool reports carries one of these codes."""

from __future__ import annotations

from typing import Literal

ErrorCode = Literal[
    "auth_failed",
    "account_unknown",
    "provider_unsupported",
    "query_too_broad",
    "not_found",
    "invalid_input",
    "send_forbidden",
    "label_forbidden",
    "duplicate_send",
    "upstream_error",
    "config_invalid",
    # An unsubscribe that cannot be done safely (unsigned header, a URL or address it may not
    # contact); nothing was contacted and nothing sent.
    "unsubscribe_refused",
]

RefusalKind = Literal["web_login", "imap_disabled", "overquota", "signed_out"]


class MailError(Exception):
    """An error a tool reports as a structured result: `{"error": {code, message, retryable}}`."""

    def __init__(
        self, code: ErrorCode, message: str, *, retryable: bool = False, kind: RefusalKind | None = None
    ) -> None:
        super().__init__(message)
        self.code: ErrorCode = code
        self.message = message
        self.retryable = retryable
        # Which of Gmail's refusals this is, where the code alone does not say (the watcher ends on
        # `web_login` as on `auth_failed`); never part of the tool result.
        self.kind: RefusalKind | None = kind

    def as_dict(self) -> dict[str, object]:
        return {"code": self.code, "message": self.message, "retryable": self.retryable}


def invalid_input(message: str) -> MailError:
    return MailError("invalid_input", message)


def not_found(message: str) -> MailError:
    return MailError("not_found", message)
