"""The vault's `.mcp.json` entry starts the add-on from the vault root, whichever folder Claude Code runs in.

The launcher (mcp_multi_gmail/launcher.py) runs with a stand-in `uv` (through `UV`, which the real
`uv run` sets) that reports where and how it was started; the last test runs the entry for real,
with uv and a release build, from a subfolder. tests/test_claude_code.py does it with Claude Code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from gmail_emulator import GmailEmulator
from mcp_multi_gmail.launcher import LAUNCHER_CODE, mcp_json_text, mcp_server_entry, server_args
from support import ROOT, gmail_env
from support.release import build_release_vault, user_shell_env

# Reports cwd, argv, the stdin it read to its end and VIRTUAL_ENV; exits with FAKE_UV_EXIT.
FAKE_UV = """\
import json, os, sys
data = sys.stdin.read()
report = {"cwd": os.getcwd(), "argv": sys.argv[1:], "stdin": data, "pid": os.getpid()}
report["venv"] = os.environ.get("VIRTUAL_ENV")
with open(os.environ["FAKE_UV_REPORT"], "w", encoding="utf-8") as handle:
    json.dump(report, handle)
sys.exit(int(os.environ.get("FAKE_UV_EXIT", "0")))
"""
# One mailbox of the emulator fixture (tests/conftest.py).
MAILBOX = {"name": "osobni", "address": "osobni@example.cz", "password": "osobniheslohesla"}


def vault_tree(tmp_path: Path, kind: str = ".doplnky") -> Path:
    vault = tmp_path / "vault"
    (vault / ".miladka").mkdir(parents=True)
    (vault / ".miladka" / "VERSION").write_text("2.1\n", encoding="utf-8")
    (vault / kind / "mcp-multi-gmail").mkdir(parents=True)
    (vault / "denik" / "2026" / "12").mkdir(parents=True)
    return vault


def fake_uv(tmp_path: Path) -> Path:
    script = tmp_path / "fake-uv"
    script.write_text(f"#!{sys.executable}\n{FAKE_UV}", encoding="utf-8")
    script.chmod(0o755)
    return script


def launch(
    tmp_path: Path, cwd: Path, args: list[str], *, code: str = LAUNCHER_CODE, exit_code: int = 0, stdin: bytes = b""
) -> tuple[subprocess.CompletedProcess[bytes], dict[str, object]]:
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    env = {
        **os.environ,
        "UV": str(fake_uv(tmp_path)),
        "FAKE_UV_REPORT": str(report),
        "FAKE_UV_EXIT": str(exit_code),
        "VIRTUAL_ENV": "/somewhere/.venv",
    }
    done = subprocess.run(
        [sys.executable, "-c", code, *args], cwd=cwd, input=stdin, capture_output=True, env=env, timeout=60
    )
    reported: dict[str, object] = json.loads(report.read_text(encoding="utf-8"))
    return done, reported


@pytest.mark.skipif(os.name == "nt", reason="the stand-in uv is a POSIX script")
@pytest.mark.parametrize("where", [".", "denik", "denik/2026/12", ".doplnky/mcp-multi-gmail"])
def test_launcher_runs_uv_in_the_vault_root(tmp_path: Path, where: str) -> None:
    vault = vault_tree(tmp_path)
    done, report = launch(tmp_path, vault / where, server_args())
    assert done.returncode == 0, done.stderr
    assert report["cwd"] == str(vault)
    assert report["argv"] == ["run", *server_args()]  # relative paths, as in .mcp.json
    assert report["venv"] is None
    assert done.stdout == b""  # stdout belongs to MCP


@pytest.mark.skipif(os.name == "nt", reason="the stand-in uv is a POSIX script")
def test_launcher_takes_the_nearest_vault_and_english_layout(tmp_path: Path) -> None:
    vault = vault_tree(tmp_path, ".addons")
    inner = vault / "denik" / "2026"
    (inner / ".miladka").mkdir()
    done, report = launch(tmp_path, vault / "denik" / "2026" / "12", server_args(".addons"))
    assert done.returncode == 0, done.stderr
    assert report["cwd"] == str(inner)
    assert "--project" in server_args(".addons") and ".addons/mcp-multi-gmail" in server_args(".addons")


@pytest.mark.skipif(os.name == "nt", reason="the stand-in uv is a POSIX script")
def test_launcher_outside_a_vault_stays_put(tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "folder"
    plain.mkdir(parents=True)
    done, report = launch(tmp_path, plain, ["--version"])
    assert done.returncode == 0 and report["cwd"] == str(plain)


@pytest.mark.skipif(os.name == "nt", reason="the stand-in uv is a POSIX script")
@pytest.mark.parametrize("branch", ["posix-exec", "windows-call"])
def test_launcher_passes_stdin_and_the_exit_code(tmp_path: Path, branch: str) -> None:
    """POSIX replaces the launcher by uv (same pid); Windows (no exec) waits for it as a child.
    Either way uv reads the client's stdin to its end and its exit code is the launcher's."""
    vault = vault_tree(tmp_path)
    code = LAUNCHER_CODE if branch == "posix-exec" else LAUNCHER_CODE.replace("if os.name=='nt'", "if True")
    assert code != LAUNCHER_CODE or branch == "posix-exec"
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *server_args()],
        cwd=vault / "denik",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={
            **os.environ,
            "UV": str(fake_uv(tmp_path)),
            "FAKE_UV_REPORT": str(tmp_path / "r.json"),
            "FAKE_UV_EXIT": "7",
        },
    )
    out, err = proc.communicate(b'{"jsonrpc": "2.0"}\n', timeout=60)
    assert proc.returncode == 7, err
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["stdin"] == '{"jsonrpc": "2.0"}\n' and report["cwd"] == str(vault)
    assert (report["pid"] == proc.pid) is (branch == "posix-exec")
    assert out == b""


def test_launcher_code_is_one_line_of_plain_json() -> None:
    """It sits in .mcp.json as it is: no escapes a reader would have to decode, nothing a shell or
    Claude Code's `${VAR}` expansion would touch, and Python 3.8 syntax."""
    assert "\n" not in LAUNCHER_CODE and '"' not in LAUNCHER_CODE and "\\" not in LAUNCHER_CODE
    assert "$" not in LAUNCHER_CODE
    compile(LAUNCHER_CODE, "<launcher>", "exec", flags=0, dont_inherit=True, _feature_version=8)
    entry = mcp_server_entry()
    assert entry["command"] == "uv" and entry["args"][:6] == [
        "run",
        "--no-project",
        "--quiet",
        "python",
        "-c",
        LAUNCHER_CODE,
    ]
    assert json.loads(mcp_json_text()) == {"mcpServers": {"multi-gmail": entry}}


@pytest.mark.parametrize(
    "doc",
    [
        "README.md",
        "README.en.md",
        "docs/pro-asistenta-nastaveni.md",
        "src/mcp_multi_gmail/data/pro-asistenta-nastaveni.md",
    ],
)
def test_docs_give_the_generated_mcp_json(doc: str) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    assert f"```json\n{mcp_json_text()}\n```" in text
    assert '"--project", ".doplnky/mcp-multi-gmail"' not in text  # the old entry, which failed in subfolders


# ------------------------------------------------------------------ for real: uv and a release build


def shell_env(emulator: GmailEmulator) -> dict[str, str]:
    """A user's shell: no outer venv on PATH, no MG_* left over; the emulator as Gmail."""
    env = user_shell_env()  # the suite's own uv first on PATH (support/release.py)
    # A uv that lives only in the venv (whose bin user_shell_env takes off PATH) is put back in front.
    uv = shutil.which("uv", path=env["PATH"]) or shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH: the .mcp.json entry starts `uv`")
    env["PATH"] = os.pathsep.join([str(Path(uv).parent), env["PATH"]])
    env.update(gmail_env(emulator))
    return env


@pytest.fixture(scope="module")
def release_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The README's layout: .miladka/VERSION, system/multigmail.json, .mcp.json, the release build."""
    vault = build_release_vault(tmp_path_factory.mktemp("launcher") / "vault", [MAILBOX])
    (vault / "denik" / "2026").mkdir(parents=True)
    return vault


@pytest.mark.anyio
async def test_mcp_json_entry_serves_from_a_subfolder(release_vault: Path, emulator: GmailEmulator) -> None:
    entry = json.loads((release_vault / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["multi-gmail"]
    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=shell_env(emulator), cwd=release_vault / "denik" / "2026"
    )
    async with Client(params) as client:
        result = await client.call_tool("mg_list_accounts", {"verify": True})
        assert result.is_error is False and result.structured_content is not None
        assert result.structured_content["failures"] == []
        assert [a["account"] for a in result.structured_content["accounts"]] == ["osobni"]
