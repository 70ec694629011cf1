"""The JSON configuration: models, loading, password resolution, validation."""

from .durations import MIN_INTERVAL_MS, parse_duration_ms, parse_hours
from .loader import load_config
from .passwords import PLACEHOLDER, normalize_app_password
from .report import ConfigError
from .resolved import Account, Alias, Config, Signature
from .signatures import html_to_text

__all__ = [
    "MIN_INTERVAL_MS",
    "PLACEHOLDER",
    "Account",
    "Alias",
    "Config",
    "ConfigError",
    "Signature",
    "html_to_text",
    "load_config",
    "normalize_app_password",
    "parse_duration_ms",
    "parse_hours",
]
