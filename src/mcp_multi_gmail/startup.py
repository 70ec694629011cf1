"""The start-up report: guard, configuration, warnings; shared by the server and `--check-config`.

Both print exactly these Czech lines, so `--check-config` shows what a start would show and any
new start-up warning appears in both without a second copy of the checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .config import Config
from .gmail.endpoint import Endpoint
from .layout import AddonLayout
from .runtime import Problem, Runtime, check_start


@dataclass
class StartupReport:
    """`lines` in the order a start prints them; `runtime` is None when it cannot start."""

    lines: list[str] = field(default_factory=list)
    runtime: Runtime | None = None
    problem: Problem | None = None  # which check refused: "guard", "config" or "endpoint"

    @property
    def config(self) -> Config | None:
        return self.runtime.config if self.runtime is not None else None

    @property
    def endpoint(self) -> Endpoint | None:
        return self.runtime.endpoint if self.runtime is not None else None

    @property
    def can_start(self) -> bool:
        return self.runtime is not None


def startup_report(
    path: Path, *, project: Path, release: bool, layout: AddonLayout | None, environ: Mapping[str, str]
) -> StartupReport:
    """Everything a start checks before serving: location guard → config → warnings. No network.

    The checks live beside the runtime (runtime.check_start), where `mg_reload_config` runs them
    again to end repair mode."""
    check = check_start(path, project=project, release=release, layout=layout, environ=environ)
    return StartupReport(lines=check.lines, runtime=check.runtime, problem=check.problem)


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
