"""mg_get_attachment: one attachment decoded and written into the download folder, never inline."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from ...config import Account
from ...errors import MailError, not_found
from ...gmail.imap import ALL_MAIL, ImapSession
from ...gmail.parse.bodystructure import Part, attachment_parts
from ...gmail.parse.filenames import generated_name, safe_filename
from ...gmail.parse.transfer import decodable, decode_bytes, decode_judged, judge, uu_blocks
from ...runtime import Runtime
from ..core import budget, inputs
from ..core.lookup import disappeared, find_message
from ..core.session import in_session
from . import bodies


class AttachmentResult(BaseModel):
    account: str
    message_id: str
    attachment_id: str
    filename: str
    mime_type: str
    size_bytes: int
    path: str = Field(description="Absolute path of the written file")
    decoded: bool = Field(
        default=True,
        description="false: the part's transfer encoding (transfer_encoding) is not one this server can undo, "
        'or the content cannot have it (words where base64 belongs, "=" signs that are not escapes); the file '
        "holds the part as it came",
    )
    transfer_encoding: str | None = Field(
        default=None, description="The part's Content-Transfer-Encoding, set when decoded is false"
    )
    cut: list[budget.Cut] = budget.cut_field()


@dataclass
class _Download:
    data: bytes
    filename: str
    mime_type: str
    undecoded: str | None = None  # the transfer encoding left as it came


def _uu_file(session: ImapSession, uid: int, parts: list[Part], part_id: str) -> _Download | None:
    """A uuencoded file inside a plain text part, by the id bodies.uu_split listed it under."""
    parent_id, _, index = part_id.rpartition(".")
    parent = next((p for p in parts if p.part_id == parent_id and p.mime_type == "text/plain"), None)
    if parent is None or not index.isdigit():
        return None
    raw = bodies.content_of(session, uid, parent, session.fetch_part(uid, parent_id))
    data = decode_judged(raw or b"", parent.encoding, parent.charset, text=True)  # as bodies.uu_split reads it
    blocks = uu_blocks(data)
    if not 1 <= int(index) <= len(blocks):
        return None
    block = blocks[int(index) - 1]
    name, mime_type, _made = bodies.uu_block_name(parent, int(index), block)
    return _Download(block.data(data), safe_filename(name, part_id), mime_type)


def _download(session: ImapSession, account: Account, bare: str, part_id: str) -> _Download:
    session.open(ALL_MAIL)
    uid, _copies = find_message(session, account, bare)
    item = session.fetch([uid], ["BODYSTRUCTURE"]).get(uid)
    if item is None or item.parts is None:
        raise not_found(f"The structure of message <{bare}> could not be read.")
    listed = {part.part_id: part for part in attachment_parts(item.parts)}
    part = listed.get(part_id)
    if part is None and (inside := _uu_file(session, uid, item.parts, part_id)) is not None:
        return inside
    if part is None:
        raise not_found(
            f'That message has no attachment "{part_id}". Attachment ids come from mg_get_message and belong '
            "to the message they were listed for."
        )
    raw = bodies.content_of(session, uid, part, session.fetch_part(uid, part_id))
    if raw is None:
        raise disappeared(bare, account)
    name = safe_filename(part.filename or generated_name(part.part_id, part.mime_type), part_id)
    judged = judge(raw, part.encoding, part.charset)  # a file: its bytes need not be text
    if not decodable(part.encoding) or judged.ignored:  # saved as it came, and the result says so
        return _Download(raw, name, part.mime_type, undecoded=part.encoding)
    return _Download(decode_bytes(raw, judged.encoding), name, part.mime_type)


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
        decoded=download.undecoded is None,
        transfer_encoding=download.undecoded,
    )
