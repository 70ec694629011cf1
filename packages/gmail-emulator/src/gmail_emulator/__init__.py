"""A from-scratch local Gmail (IMAP + SMTP) for tests and the demo; see README.md.

The public names load lazily, so importing a submodule (or ``python -m gmail_emulator``) does not
pull in the servers, aiosmtpd or trustme until they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .controller import EmulatorEnv, GmailEmulator, MessageInfo
    from .knobs import Knobs
    from .observe import FaultRule
    from .smtp_delivery import OutboxEntry
    from .smtp_faults import SmtpFault
    from .trace import Verdict

__all__ = ["EmulatorEnv", "FaultRule", "GmailEmulator", "Knobs", "MessageInfo", "OutboxEntry", "SmtpFault", "Verdict"]

_WHERE = {
    "EmulatorEnv": ".controller",
    "GmailEmulator": ".controller",
    "MessageInfo": ".controller",
    "Knobs": ".knobs",
    "FaultRule": ".observe",
    "OutboxEntry": ".smtp_delivery",
    "SmtpFault": ".smtp_faults",
    "Verdict": ".trace",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
