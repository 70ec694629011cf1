"""mg_get_attachment: one attachment decoded and written into the download folder, never inline."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from ..config import Account
from ..errors import MailError, not_found
from ..gmail.imap import ALL_MAIL, ImapSession
from ..gmail.parse.bodystructure import attachment_parts
from ..gmail.parse.filenames import generated_name, safe_filename
from ..gmail.parse.transfer import decode_bytes
from ..runtime import Runtime
from . import inputs
from .read import disappeared, find_message
from .session import in_session


class AttachmentResult(BaseModel):
    account: str
    message_id: str
    attachment_id: str
    filename: str
    mime_type: str
    size_bytes: int
    path: str = Field(description="Absolute path of the written file")


@dataclass
class _Download:
    data: bytes
    filename: str
    mime_type: str


def _download(session: ImapSession, account: Account, bare: str, part_id: str) -> _Download:
    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    item = session.fetch([uid], ["BODYSTRUCTURE"]).get(uid)
    if item is None or item.parts is None:
        raise not_found(f"The structure of message <{bare}> could not be read.")
    listed = {part.part_id: part for part in attachment_parts(item.parts)}
    part = listed.get(part_id)
    if part is None:
        raise not_found(
            f'That message has no attachment "{part_id}". Attachment ids come from mg_get_message and belong '
            "to the message they were listed for."
        )
    raw = session.fetch_part(uid, part_id)
    if raw is None:
        raise disappeared(bare, account)
    name = part.filename or generated_name(part.part_id, part.mime_type)
    return _Download(decode_bytes(raw, part.encoding), safe_filename(name, part_id), part.mime_type)


def _write_inside(directory: Path, filename: str, data: bytes) -> Path:
    """Write into download_dir only: the final path is checked, and a planted symlink is not followed."""
    directory.mkdir(parents=True, exist_ok=True)
    root = directory.resolve()
    target = root / filename
    if target.parent != root:
        raise MailError("upstream_error", f"Refusing to write {filename!r} outside the download folder {root}.")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(target, flags, 0o644)
    except OSError as error:
        raise MailError("upstream_error", f"Could not write {target}: {error.strerror}.") from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    return target


async def get_attachment(runtime: Runtime, account_name: str, message_id: str, attachment_id: str) -> AttachmentResult:
    bare = inputs.message_id(message_id)
    part_id = inputs.attachment_id(attachment_id)
    account = runtime.account(account_name)
    download = await in_session(runtime, account, lambda s: _download(s, account, bare, part_id))
    target = _write_inside(runtime.config.download_dir, download.filename, download.data)
    return AttachmentResult(
        account=account.name,
        message_id=bare,
        attachment_id=part_id,
        filename=download.filename,
        mime_type=download.mime_type,
        size_bytes=len(download.data),
        path=str(target),
    )
