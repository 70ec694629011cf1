"""The start-up report: guard, configuration, warnings; shared by the server and `--check-config`.

Both print exactly these Czech lines, so `--check-config` shows what a start would show and any
new start-up warning appears in both without a second copy of the checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .config import Config, ConfigError
from .gitwarn import secrets_in_git_warnings
from .gmail.endpoint import Endpoint, EndpointError
from .layout import GUARD_MESSAGE, AddonLayout, check_location
from .runtime import Runtime


@dataclass
class StartupReport:
    """`lines` in the order a start prints them; `runtime` is None when it cannot start."""

    lines: list[str] = field(default_factory=list)
    runtime: Runtime | None = None

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
    """Everything a start checks before serving: location guard → config → warnings. No network."""
    report = StartupReport()
    if check_location(project, release=release) is not None:
        report.lines.append(GUARD_MESSAGE)
        return report
    try:
        runtime = Runtime.load(path, environ=environ, layout=layout)
    except (ConfigError, EndpointError) as error:
        report.lines.append(str(error))
        return report
    config, endpoint = runtime.config, runtime.endpoint
    report.lines.extend(f"POZOR: {warning}" for warning in config.warnings)
    if endpoint.overridden:
        report.lines.append(
            f"POZOR: místo Gmailu se připojuji k {endpoint.imap_host}:{endpoint.imap_port} "
            "(MG_GMAIL_ENDPOINT, jen pro testy a ukázku)."
        )
    report.lines.extend(secrets_in_git_warnings(config.secret_files))
    report.runtime = runtime
    return report


def summary(config: Config) -> str:
    return f"nastavených schránek: {len(config.accounts)}, přílohy do: {config.download_dir}"


def running_line(config: Config) -> str:
    return f"mcp-multi-gmail {__version__} běží, {summary(config)}"
