"""Outgoing attachments: only regular files with a single name, whose real path lies inside a
configured attachment folder."""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import MailError
from ..headers import check_header_value, show
from .common import _quoted_list, _refuse_bare_str, check_count

MAX_ATTACHMENTS = 100  # files in one message: more is no real message, only a flood

# Kernel pseudo-filesystems: their entries can look like regular files (/proc/self/environ).
_PSEUDO_FS_ROOTS = ("/proc", "/sys", "/dev")


@dataclass(frozen=True)
class AllowedAttachment:
    """A file that may be attached: its resolved real path and the name it is attached under."""

    path: Path
    filename: str


def _inside(real: str, directory: str) -> bool:
    # A prefix check alone would let /x/mail-other pass for /x/mail, hence the separator.
    prefix = directory if directory.endswith(os.sep) else directory + os.sep
    return real == directory or real.startswith(prefix)


def resolve_attachments(paths: Sequence[str], attachment_dirs: Sequence[Path]) -> list[AllowedAttachment]:
    """Outgoing attachments: absolute paths whose real location lies inside an allowed folder."""
    _refuse_bare_str("paths", paths)
    if not paths:
        return []
    check_count("attachments", paths, MAX_ATTACHMENTS)
    if not attachment_dirs:
        raise MailError(
            "send_forbidden",
            "Attachments are off: no attachment_dirs are configured, and without that list files "
            "may be attached from nowhere. Nothing was attached, sent or saved. Tell the user the "
            "file could not be attached; do not propose enabling attachments.",
        )
    # Config makes the folders absolute; a relative one would depend on the working directory,
    # so it never counts.
    allowed = [os.path.realpath(d) for d in attachment_dirs if os.path.isabs(d)]

    result: list[AllowedAttachment] = []
    for given in paths:
        shown = show(given)
        if any(ch in given for ch in "\x00\r\n"):
            raise MailError("invalid_input", f'The attachment path "{shown}" contains a NUL or line break.')
        if not os.path.isabs(given):
            raise MailError("invalid_input", f'The attachment path "{shown}" is relative; give an absolute path.')
        try:
            real = os.path.realpath(given, strict=True)
        except OSError:  # missing, dangling symlink, symlink loop, no permission
            raise MailError("not_found", f'No readable file at "{shown}". Nothing was attached.') from None

        if not any(_inside(real, d) for d in allowed):
            where = f" (its real path is {show(real)})" if real != os.path.normpath(given) else ""
            raise MailError(
                "send_forbidden",
                f'The file "{shown}"{where} is outside the folders attachments may come from: '
                f"{_quoted_list([str(d) for d in attachment_dirs])}. Nothing was attached, sent or "
                "saved. Which folders are allowed is the user's own decision, not something to "
                "propose changing.",
            )
        if any(_inside(real, root) for root in _PSEUDO_FS_ROOTS):
            raise MailError("invalid_input", f'"{shown}" is a system file, not a file that can be attached.')
        try:
            mode = os.stat(real).st_mode
        except OSError:
            raise MailError("not_found", f'No readable file at "{shown}". Nothing was attached.') from None
        if not stat.S_ISREG(mode):
            raise MailError(
                "invalid_input", f'"{shown}" is not a regular file (a folder or a device); attach files only.'
            )

        filename = os.path.basename(real)
        check_header_value("attachment filename", filename)
        result.append(AllowedAttachment(path=Path(real), filename=filename))
    return result


def check_single_name(attachments: Sequence[AllowedAttachment]) -> None:
    """Outgoing files must have one name only. A hard link has no "real path" elsewhere to resolve:
    the same file may also live outside the allowed folders under another name (a hard link planted
    in an allowed folder would carry it out), so a file with several names is not attached."""
    for item in attachments:
        try:
            names = os.stat(item.path).st_nlink
        except OSError:
            continue  # gone: reading it reports that
        if names > 1:
            raise MailError(
                "send_forbidden",
                f'The file "{show(str(item.path))}" has {names} names (hard links), so it may be a file that lives '
                "outside the folders attachments may come from. Nothing was attached, sent or saved. A file with a "
                "single name, such as a copy, can be attached.",
            )
