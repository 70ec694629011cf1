"""What a mailbox signed in with Google tells the assistant when its sign-in cannot be used.

Every message names the mailbox and, where the user has to act, the one command that signs it in
again; none carries a token, the client secret or an answer of Google's beyond its error code.
Why sign-ins end: https://developers.google.com/identity/protocols/oauth2#expiration.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from ..errors import MailError
from ..layout import project_dir

# Google's Cloud console, where the client's project is published (docs/pro-asistenta-nastaveni.md).
_TESTING_EXPIRY = (
    'A Google Cloud project whose app is still in "Testing" (External users) gives sign-ins that end '
    'after 7 days; publishing the app "In production" (Google Auth Platform, Audience) avoids that, '
    'and a Workspace can use an "Internal" app instead, which never expires.'
)


def sign_in_command(config: Path, name: str) -> str:
    """The command the user runs in their own terminal; absolute paths, so it works from any folder."""
    command = ["uv", "run", "--no-dev", "--project", str(project_dir()), "mcp-multi-gmail"]
    return shlex.join([*command, "--config", str(config), "--sign-in", name])


def _run_again(config: Path, name: str) -> str:
    return (
        f"Ask the user to run this in their own terminal (not through you: the sign-in opens a browser and "
        f"you never see the tokens): {sign_in_command(config, name)}"
    )


def not_signed_in(name: str, address: str, config: Path) -> MailError:
    return MailError(
        "auth_failed",
        f'Mailbox "{name}" ({address}) signs in with Google ("auth": "oauth") but is not signed in yet. '
        + _run_again(config, name),
    )


def signed_out(name: str, address: str, config: Path) -> MailError:
    return MailError(
        "auth_failed",
        f'Mailbox "{name}" ({address}): signed-in access revoked or expired. Google answered invalid_grant: '
        "the user removed the access, changed the account's password, or the 7 days of a project in "
        f"Testing are up. {_run_again(config, name)}. {_TESTING_EXPIRY}",
        kind="signed_out",
    )


def damaged_tokens(name: str, path: Path, config: Path, *, reason: str | None = None) -> MailError:
    why = f"cannot be read ({reason})" if reason else "is damaged"
    return MailError(
        "auth_failed",
        f'The sign-in tokens file {path} {why}, so mailbox "{name}" cannot sign in. Never open it: signing in '
        f"again rewrites it. {_run_again(config, name)}",
    )


def endpoint_unreachable(name: str, detail: str) -> MailError:
    return MailError(
        "upstream_error",
        f'Google\'s token service did not answer for mailbox "{name}" ({detail}); the sign-in itself is fine. '
        "Try again in a while.",
        retryable=True,
    )


def endpoint_refused(name: str, code: str, client_file: Path) -> MailError:
    return MailError(
        "auth_failed",
        f'Google refused the client of mailbox "{name}" ({code}): the Google client file {client_file} '
        "(oauth_client_file) no longer matches a client in Google Cloud, or the client was deleted. Ask the "
        "user to download the Desktop app client's JSON again (never open the file yourself).",
    )
