"""The lines a start prints around the start-up report (runtime.check_start's guard →
configuration → warnings), shared by the server and `--check-config`.

Both print the report's exact Czech lines, so `--check-config` shows what a start would show and
any new start-up warning appears in both without a second copy of the checks.
"""

from __future__ import annotations

from . import __version__
from .config import Config


def repair_line() -> str:
    """The last stderr line of a start in repair mode (where a good start says `běží`), after the report."""
    return (
        f"mcp-multi-gmail {__version__} běží v režimu opravy: nástroje pošty jsou vypnuté a asistent "
        "dostal toto hlášení; po opravě zavolá mg_reload_config."
    )


def summary(config: Config) -> str:
    return f"nastavených schránek: {len(config.accounts)}, přílohy do: {config.download_dir}"


def running_line(config: Config) -> str:
    return f"mcp-multi-gmail {__version__} běží, {summary(config)}"
