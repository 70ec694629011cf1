"""What the subjects of the policy share: quoting a refused list, bounding a list argument."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import MailError
from ..headers import show

_LIST_LIMIT = 20  # items quoted in one message; the rest are counted


def _quoted_list(items: Sequence[str]) -> str:
    shown = ", ".join(f'"{show(item)}"' for item in items[:_LIST_LIMIT])
    rest = len(items) - _LIST_LIMIT
    return f"{shown} and {rest} more" if rest > 0 else shown


def check_count(what: str, items: Sequence[object], limit: int) -> None:
    """A list argument may hold at most `limit` entries."""
    if len(items) > limit:
        raise MailError(
            "invalid_input",
            f"{len(items)} {what} in one message; at most {limit} are accepted. Nothing was sent or saved.",
        )


def _refuse_bare_str(name: str, value: object) -> None:
    # A str is a Sequence[str] too; iterating it character by character would give nonsense.
    if isinstance(value, str):
        raise TypeError(f"{name} must be a sequence of strings, not a single string")
