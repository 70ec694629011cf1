"""The JSON configuration: models, loading, password resolution, validation."""

from ..text import html_to_text  # re-exported: it used to live here
from .durations import MIN_INTERVAL_MS, parse_duration_ms, parse_hours
from .loader import load_config
from .passwords import PLACEHOLDER, normalize_app_password
from .report import ConfigError
from .resolved import Account, Alias, Config, OAuthClient, Signature, SignIn
from .zone import UserZone

__all__ = [
    "MIN_INTERVAL_MS",
    "PLACEHOLDER",
    "Account",
    "Alias",
    "Config",
    "ConfigError",
    "OAuthClient",
    "SignIn",
    "Signature",
    "UserZone",
    "html_to_text",
    "load_config",
    "normalize_app_password",
    "parse_duration_ms",
    "parse_hours",
]
