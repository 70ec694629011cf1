"""Attachment names made safe to create in the download directory on any operating system."""

from __future__ import annotations

import re

from ...text import clean

MAX_FILENAME_CHARS = 200
# ext4, APFS and NTFS allow 255 bytes/units per name; Czech names take two bytes a letter.
MAX_FILENAME_BYTES = 240
_UNSAFE_FILENAME_CHARS = re.compile(r'[\x00-\x1f\x7f-\x9f\\/:*?"<>|\ud800-\udfff]')
_WINDOWS_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"}
    | {f"{prefix}{n}" for prefix in ("COM", "LPT") for n in [*"123456789", "¹", "²", "³"]}
)
_MAX_EXTENSION = 16
MAX_NAME_SHOWN = 100  # longer attachment names are saved under a neutral one
_PLAIN_EXTENSION = re.compile(r"\.[A-Za-z0-9]{1,10}$")


def _strip_end(name: str) -> str:
    # A loop, not a regex: "[\s.]+$" is quadratic on a long run of dots that does not end the name.
    end = len(name)
    while end and (name[end - 1] == "." or name[end - 1].isspace()):
        end -= 1
    return name[:end]


def _fits(name: str) -> bool:
    return len(name) <= MAX_FILENAME_CHARS and len(name.encode("utf-8")) <= MAX_FILENAME_BYTES


def _cap(name: str) -> str:
    if _fits(name):
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or not extension or len(extension) > _MAX_EXTENSION:
        stem, extension = name, ""
    else:
        extension = "." + extension
    stem = stem[: MAX_FILENAME_CHARS - len(extension)]
    while stem and not _fits(stem + extension):
        stem = stem[:-1]
    return _strip_end(stem) if not extension else stem + extension


def safe_filename(name: str | None, attachment_id: str) -> str:
    """A name that is safe to create inside the download directory on any OS."""
    digits = re.sub(r"[^0-9.]", "", attachment_id or "")
    fallback = f"part-{digits}.bin" if digits else "part.bin"
    if name is None:
        return fallback
    text = re.split(r"[/\\]", clean(name))[-1]  # both separators on every OS: last segment only
    text = _UNSAFE_FILENAME_CHARS.sub("_", text)
    text = _strip_end(text.strip())  # Windows drops trailing dots and spaces itself
    if text in ("", ".", ".."):
        return fallback
    if text.split(".", 1)[0].rstrip(" ").upper() in _WINDOWS_DEVICES:  # CON, con.txt, LPT1.tar.gz
        text = "_" + text
    if len(text) > MAX_NAME_SHOWN:
        # A name this long is a sentence, and a sentence in a file name can be written to steer
        # whoever reads it: keep only a plain extension.
        extension = _PLAIN_EXTENSION.search(text)
        return f"attachment-{digits or '0'}{extension.group(0).lower() if extension else ''}"
    return _cap(text) or fallback


# The one table of file-name extensions by MIME type: a nameless part is named from it, and a file
# to attach gets its type from it (before the platform's own table, which differs between systems).
# The extension is what a user's program opens: .ics for a calendar invite (RFC 5545 section 8.1).
EXTENSIONS = {
    "application/octet-stream": "bin",
    "application/pdf": "pdf",
    "application/zip": "zip",
    "application/msword": "doc",
    "application/postscript": "ps",
    "application/ics": "ics",
    "application/pgp-signature": "asc",
    "application/pgp-encrypted": "asc",
    "application/pkcs7-signature": "p7s",
    "application/pkcs7-mime": "p7m",
    "application/ms-tnef": "dat",
    "message/rfc822": "eml",
    "message/global": "eml",
    "message/partial": "eml",
    "message/delivery-status": "txt",
    "message/disposition-notification": "txt",
    "text/rfc822-headers": "txt",
    "text/plain": "txt",
    "text/enriched": "txt",
    "text/richtext": "rtx",
    "text/html": "html",
    "text/calendar": "ics",
    "text/vcard": "vcf",
    "text/x-vcard": "vcf",
    "text/csv": "csv",
    "audio/basic": "au",
    "image/jpeg": "jpg",
    "image/png": "png",
    "image/gif": "gif",
    "image/pjpeg": "jpg",
    "image/svg+xml": "svg",
    "image/x-xbitmap": "xbm",
    "video/quicktime": "mov",
}
# Extensions that name another type first in the table above (.txt is text/plain, not enriched).
_TYPE_OF_EXTENSION = {
    "txt": "text/plain",
    "eml": "message/rfc822",
    "asc": "application/pgp-signature",
    "vcf": "text/vcard",
    "ics": "text/calendar",
    "jpg": "image/jpeg",
}
_PLAIN_SUBTYPE = re.compile(r"[a-z0-9]{1,10}")


def extension_for(mime_type: str) -> str:
    """The extension for a MIME type: from the table; else its subtype when that is a plain word
    ("image/gif" → "gif", "x-" dropped); else "bin"."""
    kind = mime_type.strip().lower()
    if kind in EXTENSIONS:
        return EXTENSIONS[kind]
    main, _, subtype = kind.partition("/")
    subtype = subtype[2:] if subtype.startswith("x-") else subtype
    if f"{main}/{subtype}" in EXTENSIONS:
        return EXTENSIONS[f"{main}/{subtype}"]
    return subtype if _PLAIN_SUBTYPE.fullmatch(subtype) else "bin"


def type_for(filename: str) -> str | None:
    """The MIME type the table gives a file name's extension, or None when it names none."""
    extension = filename.rpartition(".")[2].lower() if "." in filename else ""
    if extension in _TYPE_OF_EXTENSION:
        return _TYPE_OF_EXTENSION[extension]
    return next((kind for kind, known in EXTENSIONS.items() if known == extension), None)


def generated_name(part_id: str, mime_type: str) -> str:
    """A name for a part that has none: its part number and an extension from its type
    ("part-1.2.gif", "part-3.ics"), so it can be listed and saved like any named attachment."""
    digits = re.sub(r"[^0-9.]", "", part_id or "") or "0"
    return f"part-{digits}.{extension_for(mime_type)}"
