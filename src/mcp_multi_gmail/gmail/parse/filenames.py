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


# Extensions for nameless parts, by subtype; any other plain subtype is its own extension.
_SUBTYPE_EXTENSIONS = {
    "octet-stream": "bin",
    "rfc822": "eml",
    "global": "eml",
    "basic": "au",
    "jpeg": "jpg",
    "plain": "txt",
    "enriched": "txt",
    "richtext": "rtx",
    "xbitmap": "xbm",
    "svg+xml": "svg",
    "postscript": "ps",
    "msword": "doc",
    "quicktime": "mov",
    "delivery-status": "txt",
    "disposition-notification": "txt",
}
_PLAIN_SUBTYPE = re.compile(r"[a-z0-9]{1,10}")


def generated_name(part_id: str, mime_type: str) -> str:
    """A name for a part that has none: its part number and an extension from its subtype
    ("part-1.2.gif"), so it can be listed and saved like any named attachment."""
    digits = re.sub(r"[^0-9.]", "", part_id or "") or "0"
    subtype = mime_type.rpartition("/")[2].lower()
    subtype = subtype[2:] if subtype.startswith("x-") else subtype
    extension = _SUBTYPE_EXTENSIONS.get(subtype)
    if extension is None:
        extension = subtype if _PLAIN_SUBTYPE.fullmatch(subtype) else "bin"
    return f"part-{digits}.{extension}"
