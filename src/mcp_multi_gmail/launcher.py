"""The vault's `.mcp.json` entry: start the add-on from the vault root, wherever Claude Code runs.

Claude Code finds `.mcp.json` in the folder it was started in or in a parent, but starts a stdio
server in its own working directory, which may be a subfolder of the vault; `.mcp.json` has no
`cwd` field, and neither `${CLAUDE_PROJECT_DIR}` nor `${PWD}` names the vault root there
(docs/architecture.md, "Started by Claude Code"). A relative `uv run --project
.doplnky/mcp-multi-gmail` then fails. So the entry runs a short launcher first, through uv
itself (`uv run --no-project python -c …`: no system Python needed, nothing written to disk):

1. walk up from the working directory to the nearest folder that holds `.miladka/` (the vault
   root; when there is none, stay where we are and let uv report the missing project);
2. change into it, so `--project` and `--config` keep their relative paths (vaults are synced
   between machines, an absolute path would not travel);
3. run `uv run <the rest of the arguments>` there: on POSIX by exec, so the server is the
   process Claude Code signals and there is no middle process to orphan; on Windows, which has
   no exec, as a child with the same stdin/stdout/stderr, passing on its exit code.

stdin is inherited, never read: when Claude Code closes it the server sees its end directly.
The code must stay valid on any Python 3 that uv may pick (pathlib, no newer syntax), one line,
with single quotes only, so it sits in JSON unescaped. `kind` is the add-on folder of layout.py
(`.doplnky`, or `.addons` in English Miládka).
"""

from __future__ import annotations

import json
from typing import Any

SERVER_NAME = "multi-gmail"
VAULT_MARKER = ".miladka"
CONFIG_ARG = "system/multigmail.json"

# `UV` is the uv that runs this code (set by `uv run`); VIRTUAL_ENV, when the outer uv used one,
# would only make the inner uv warn that it does not match the add-on's environment.
LAUNCHER_CODE = (
    "import os,sys,subprocess;from pathlib import Path as P;"
    f"h=P.cwd();r=next((d for d in (h,*h.parents) if (d/'{VAULT_MARKER}').is_dir()),h);"
    "os.chdir(r);os.environ.pop('VIRTUAL_ENV',None);"
    "c=[os.environ.get('UV') or 'uv','run',*sys.argv[1:]];"
    "sys.exit(subprocess.call(c)) if os.name=='nt' else os.execvp(c[0],c)"
)


def server_args(kind: str = ".doplnky") -> list[str]:
    """What the launcher hands to `uv run` in the vault root: the add-on's server on the vault's config."""
    return ["--no-dev", "--project", f"{kind}/mcp-multi-gmail", "mcp-multi-gmail", "--config", CONFIG_ARG]


def mcp_server_entry(kind: str = ".doplnky") -> dict[str, Any]:
    """The `mcpServers` entry of the vault's `.mcp.json`."""
    return {
        "command": "uv",
        "args": ["run", "--no-project", "--quiet", "python", "-c", LAUNCHER_CODE, *server_args(kind)],
    }


def mcp_json_text(kind: str = ".doplnky") -> str:
    """The whole `.mcp.json` as the README and the setup guide give it (one argument a line)."""
    return json.dumps({"mcpServers": {SERVER_NAME: mcp_server_entry(kind)}}, ensure_ascii=False, indent=2)
