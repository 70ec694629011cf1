"""Where the server lives: Miládka's add-on folder (or not), and the release-only location guard.

In Miládka the project sits in `<vault>/.doplnky/mcp-multi-gmail/` (English Miládka:
`<vault>/.addons/mcp-multi-gmail/`); the folder name decides the vault root and the defaults.
"""

from __future__ import annotations

import importlib.util
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .launcher import VAULT_MARKER

AddonKind = Literal[".doplnky", ".addons"]
_KINDS: tuple[AddonKind, ...] = (".doplnky", ".addons")

GUARD_MESSAGE = (
    "mcp-multi-gmail je doplněk Miládky a běží jen v ní. "
    "Miládku najdete na https://miladka.cz, doplněk si pak nainstalujte v ní.\n"
    "mcp-multi-gmail is an add-on for Miládka and runs only inside her. "
    "Get Miládka at https://miladka.cz and install the add-on there."
)


@dataclass(frozen=True)
class AddonLayout:
    vault_root: Path
    kind: AddonKind
    addon_dir: Path


def project_dir() -> Path:
    """The folder holding pyproject.toml and src/ of this installation."""
    import mcp_multi_gmail

    return Path(mcp_multi_gmail.__file__).resolve().parent.parent.parent


def detect_layout(project_dir: Path) -> AddonLayout | None:
    parent = project_dir.parent
    if parent.name not in _KINDS:
        return None
    return AddonLayout(vault_root=parent.parent, kind=parent.name, addon_dir=project_dir)


def default_download_dir(layout: AddonLayout | None) -> Path:
    if layout is None:
        return Path(tempfile.gettempdir()) / "mcp-multi-gmail"
    if layout.kind == ".doplnky":
        return layout.vault_root / "vstupy" / "prilohy"
    return layout.vault_root / "inbox" / "attachments"


def check_location(project_dir: Path, *, release: bool) -> str | None:
    """None when the server may run here; otherwise the internal (Czech) reason.

    Only release builds are fenced in; a source checkout runs anywhere, for development.
    """
    if not release:
        return None
    layout = detect_layout(project_dir)
    if layout is None:
        return f"program není ve složce doplňků Miládky (.doplnky/mcp-multi-gmail/), ale v {project_dir}"
    if not (layout.vault_root / VAULT_MARKER / "VERSION").is_file():
        return f"složka {layout.vault_root} nemá {VAULT_MARKER}/VERSION, není to složka Miládky"
    return None


def is_release_build() -> bool:
    """Release builds carry a generated marker module; a source checkout does not."""
    return importlib.util.find_spec("mcp_multi_gmail._release") is not None
