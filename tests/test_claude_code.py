"""Claude Code itself (npm `@anthropic-ai/claude-code`, pinned in tests/claude_code) as the server's client.

The README's vault: `.miladka/VERSION`, `system/multigmail.json`, the `.mcp.json` the README gives
and the release build in `.doplnky/mcp-multi-gmail/`; the demo's sample mailboxes in the emulator,
plus one long thread and one long message, so results at the schema's maximums are large.

- `claude mcp list` connects from the vault root and from a subfolder two levels down (the old
  `.mcp.json` entry, kept here as the counter-example, fails from the subfolder).
- A scripted session (`claude -p`) through a local stand-in for the Messages API
  (tests/support/messages_api.py): every request Claude Code sends is recorded, which is exactly
  what the model reads. The tests assert on it: the instructions arrived whole, results at the
  schema's maximums arrived inline (not "saved to a file"), an error arrived readable, and a
  broken configuration's report reached the model (repair mode, docs/pro-asistenta-potize.md).
- The protocol Claude Code negotiated (what `/mcp` shows as "Protocol"), read from its MCP log.

Since about 2.1.292 Claude Code lists MCP tools to the model by name only ("deferred tools") and
loads a tool's schema when the model asks `ToolSearch` for it: the script does that first, as a
model must, and the tests check that every tool's name was listed at the start.

All Claude Code runs happen once per test run (the `recorded` fixture, shared by the xdist
workers); each test asserts on one part of the record. Claude Code runs with
DISABLE_AUTOUPDATER=1 (an interactive run once updated itself globally) and a temporary HOME and
CLAUDE_CONFIG_DIR. The package is installed by the test itself (`npm ci`, tests/support/node.py).
See docs/architecture.md, "Started by Claude Code".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from gmail_emulator import GmailEmulator, Knobs
from mcp_multi_gmail.demo.setup import demo_accounts, demo_seed
from mcp_multi_gmail.launcher import mcp_server_entry
from support import gmail_env
from support.messages_api import Conversation, ToolCall, messages_api, result_text, system_text
from support.node import exclusive, in_ci, installed_packages
from support.release import build_release_vault, user_shell_env

PACKAGE = Path(__file__).resolve().parent / "claude_code"
VERSION = "2.1.332"  # the current release; 2.1.197 was the pin before (docs/architecture.md)
PROTOCOL = "2026-07-28"  # the stateless revision, which the MCP Python SDK 2.3 serves
SERVER = "multi-gmail"
BROKEN = "broken-gmail"
OURS = f"mcp__{SERVER}__"
SUBFOLDER = Path("denik") / "2026"
CONFIG = "system/multigmail.json"
BROKEN_CONFIG = "system/multigmail-broken.json"
BROKEN_KEY = "watch_intervall"  # a typo of watch_interval: an unknown key, so the file does not load
MAILBOX = "jana.novakova@example.cz"  # the demo's "osobni"
LONG_SUBJECT = "Podklady k výroční zprávě 2026"
LONG_MESSAGE_ID = "dlouha-priloha-2026@example.cz"
MISSING_MESSAGE_ID = "nikdy-nebyla@example.cz"
SAVED_NOTICE = "exceeds maximum allowed tokens"
TIMEOUT_S = 240


# ------------------------------------------------------------------ Claude Code, the vault, the mailboxes


def claude_binary() -> str:
    """Claude Code, installed from tests/claude_code's lock file when it is not yet."""
    installed_packages(PACKAGE, "the Claude Code test")
    found = shutil.which("claude", path=str(PACKAGE / "node_modules" / ".bin"))
    assert found is not None, "npm ci left no node_modules/.bin/claude"
    done = subprocess.run(
        [found, "--version"], capture_output=True, text=True, env=claude_env_base(), timeout=120, check=False
    )
    assert done.stdout.strip() == f"{VERSION} (Claude Code)", done.stdout + done.stderr
    return found


def uv_dirs() -> dict[str, str]:
    """uv's cache and Python folders as the user has them, kept when HOME moves to a temporary one."""
    uv = shutil.which("uv")
    if uv is None:
        reason = "uv is not on PATH: the vault's .mcp.json starts `uv`"
        if in_ci():
            pytest.fail(f"{reason} (CI must run it)", pytrace=False)
        pytest.skip(reason)
    found: dict[str, str] = {}
    for variable, command in (("UV_CACHE_DIR", ["cache", "dir"]), ("UV_PYTHON_INSTALL_DIR", ["python", "dir"])):
        if os.environ.get(variable):
            found[variable] = os.environ[variable]
            continue
        done = subprocess.run([uv, *command], capture_output=True, text=True, timeout=60, check=False)
        if done.returncode == 0 and done.stdout.strip():
            found[variable] = done.stdout.strip()
    return found


def claude_env_base() -> dict[str, str]:
    """A user's shell (no outer venv, no MG_*, nothing of an outer Claude Code) with the updater off."""
    env = user_shell_env(drop_prefixes=("CLAUDE", "ANTHROPIC"), drop=("MCP_TIMEOUT",))
    env.update(DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_TELEMETRY="1")
    return env


def paragraph(seed: int, length: int) -> str:
    words = ["faktura", "schůzka", "rozpočet", "smlouva", "termín", "příloha", "výbor", "zápis", "dodavatel"]
    lines, size, n = [], 0, seed
    while size < length:
        n = (n * 1103515245 + 12345) % 2**31
        line = f"{n % 997:03d} " + " ".join(words[(n >> k) % len(words)] for k in range(3, 27, 2)) + "."
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)[:length]


def long_mail(emulator: GmailEmulator) -> None:
    """A 12-message thread with 20,000-character bodies and one 250,000-character message."""
    start = datetime.now(UTC) - timedelta(days=2)
    previous: list[str] = []
    for n in range(12):
        mail = EmailMessage()
        mail["From"] = (
            "Účetní Dlouhá <ucetni@example.org>" if n % 2 == 0 else "Jana Nováková <jana.novakova@example.cz>"
        )
        mail["To"] = "jana.novakova@example.cz" if n % 2 == 0 else "ucetni@example.org"
        mail["Subject"] = LONG_SUBJECT if n == 0 else f"Re: {LONG_SUBJECT}"
        mail["Message-ID"] = f"<vyrocni-{n}@example.org>"
        mail["Date"] = format_datetime(start + timedelta(minutes=n))
        if previous:
            mail["In-Reply-To"] = previous[-1]
            mail["References"] = " ".join(previous)
        mail.set_content(paragraph(n + 1, 20_000))
        previous.append(mail["Message-ID"])
        emulator.deliver(MAILBOX, mail.as_bytes(), internaldate=start + timedelta(minutes=n))
    mail = EmailMessage()
    mail["From"] = "Archiv <archiv@example.org>"
    mail["To"] = MAILBOX
    mail["Subject"] = "Celý přepis jednání"
    mail["Message-ID"] = f"<{LONG_MESSAGE_ID}>"
    mail["Date"] = format_datetime(start + timedelta(hours=1))
    mail.set_content(paragraph(99, 250_000))
    emulator.deliver(MAILBOX, mail.as_bytes(), internaldate=start + timedelta(hours=1))


def mailboxes(workdir: Path) -> GmailEmulator:
    """The demo's mailboxes (the emulator's demo seed) plus the long mail; no filing or index delays."""
    knobs = Knobs(sent_filing_delay_s=0.0, raw_search_lag_s=0.0)
    return GmailEmulator(workdir=workdir, seed=demo_seed(), knobs=knobs)


def make_vault(folder: Path) -> Path:
    """The README's vault layout with the release build and the README's .mcp.json."""
    accounts = demo_accounts()
    root = build_release_vault((folder / "vault").resolve(), accounts)
    broken = {"accounts": accounts, BROKEN_KEY: "5m"}
    (root / BROKEN_CONFIG).write_text(json.dumps(broken, ensure_ascii=False, indent=2), encoding="utf-8")
    (root / SUBFOLDER).mkdir(parents=True)
    return root


def old_vault(vault: Path) -> Path:
    """The counter-example: the same vault with the entry the READMEs gave before the launcher."""
    old = vault.parent / "old-vault"
    shutil.copytree(vault, old, symlinks=True, ignore=shutil.ignore_patterns(".venv", "__pycache__"))
    args = ["run", "--no-dev", "--project", ".doplnky/mcp-multi-gmail", "mcp-multi-gmail", "--config", CONFIG]
    (old / ".mcp.json").write_text(json.dumps({"mcpServers": {SERVER: {"command": "uv", "args": args}}}), "utf-8")
    return old


def make_home(folder: Path, emulator: GmailEmulator, *projects: Path) -> dict[str, str]:
    """Claude Code's environment: a temporary HOME and CLAUDE_CONFIG_DIR with `projects` trusted and
    their .mcp.json server approved, uv's cache kept, the emulator as Gmail."""
    config_dir = folder / ".claude"
    config_dir.mkdir(parents=True)
    # Approval of a project's .mcp.json servers is per working folder (measured with 2.1.197 and 2.1.332):
    # the folder's trust and its enabled servers, as the first-run dialogs would record them.
    approved = {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": [SERVER]}
    state = {"hasCompletedOnboarding": True, "projects": {str(project): approved for project in projects}}
    (config_dir / ".claude.json").write_text(json.dumps(state), encoding="utf-8")
    env = {**claude_env_base(), **uv_dirs(), **gmail_env(emulator)}
    env.update(HOME=str(folder), USERPROFILE=str(folder), CLAUDE_CONFIG_DIR=str(config_dir))
    return env


def mcp_list(claude: str, cwd: Path, env: dict[str, str]) -> str:
    """`claude mcp list` in `cwd`: our server's line (the whole output when it has none)."""
    done = subprocess.run(
        [claude, "mcp", "list"],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=TIMEOUT_S,
        check=False,
    )
    out = done.stdout.decode("utf-8", "replace")
    lines = [line for line in out.splitlines() if line.startswith(f"{SERVER}:")]
    return lines[0] if len(lines) == 1 else out + done.stderr.decode("utf-8", "replace")


def server_facts(vault: Path, env: dict[str, str]) -> tuple[str, list[str]]:
    """What the server itself hands out: its instructions and its tool names (started by the .mcp.json
    entry, which also creates the add-on's .venv before Claude Code's first connection)."""
    entry = mcp_server_entry()
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env, cwd=vault)

    async def read() -> tuple[str, list[str]]:
        async with Client(params) as client:
            assert client.instructions is not None
            listed = await client.list_tools()
            return client.instructions, [tool.name for tool in listed.tools]

    return anyio.run(read)


def negotiated_protocols(home: Path, cwd: Path) -> dict[str, str]:
    """The protocol revision of each server Claude Code connected to in `cwd`, from its MCP logs
    (`~/.cache/claude-cli-nodejs/<cwd>/mcp-logs-<server>/*.jsonl`): the value `/mcp` shows."""
    found: dict[str, str] = {}
    for log in sorted((home / ".cache" / "claude-cli-nodejs").glob("*/mcp-logs-*/*.jsonl")):
        server = log.parent.name.removeprefix("mcp-logs-")
        for line in log.read_text(encoding="utf-8", errors="replace").splitlines():
            entry = json.loads(line)
            debug = entry.get("debug", "")
            if entry.get("cwd") == str(cwd) and debug.startswith("Connection established with capabilities: "):
                capabilities = json.loads(debug.split(": ", 1)[1])
                found[server] = capabilities.get("negotiatedProtocolVersion", "none")
    return found


# ------------------------------------------------------------------ a scripted session


def at_maximums(schema: dict[str, Any], **arguments: Any) -> dict[str, Any]:
    """`arguments` plus every integer argument with a published maximum set to that maximum.

    The schema is the one Claude Code handed the model. JSON Schema says `maximum`; `le` is
    pydantic's name, which the server published before its schemas were made standard (docs/architecture.md)."""
    chosen = dict(arguments)
    for name, prop in schema.get("properties", {}).items():
        bound = prop.get("maximum", prop.get("le"))
        if prop.get("type") == "integer" and isinstance(bound, int) and name not in chosen:
            chosen[name] = bound
    return chosen


def find_thread(value: Any, subject: str) -> str | None:
    """The thread_id next to `subject` anywhere in a result."""
    if isinstance(value, dict):
        thread_id = value.get("thread_id")
        if value.get("subject") in (subject, f"Re: {subject}") and isinstance(thread_id, str):
            return thread_id
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = find_thread(item, subject)
            if found is not None:
                return found
    return None


BROKEN_TOOL = f"mcp__{BROKEN}__mg_list_accounts"
USED = (OURS + "mg_next_pass", OURS + "mg_get_thread", OURS + "mg_get_message", BROKEN_TOOL)


def script(conversation: Conversation) -> ToolCall | None:
    """What the model does: load the tools it will use, ask the broken server, then a pass, the long
    thread with every body at the largest budget, the long message at the largest window, a missing message."""
    tools = conversation.tools
    calls = conversation.calls()
    done = {call.name for call, _ in calls}
    # In -p mode Claude Code waits for the servers before the first request, but offers their tools
    # by name only: ToolSearch "select:" puts the schemas into the next request's tool list.
    missing = [name for name in USED if name not in tools]
    if missing and "ToolSearch" in tools and "ToolSearch" not in done:
        return ToolCall("ToolSearch", {"query": "select:" + ",".join(missing)})
    if not any(name.startswith(OURS) for name in tools):
        return None
    broken_tool = BROKEN_TOOL
    if broken_tool in tools and broken_tool not in done:
        return ToolCall(broken_tool, {})
    since = (datetime.now(UTC) - timedelta(days=60)).strftime("%Y-%m-%d")
    if OURS + "mg_next_pass" not in done:
        schema = tools[OURS + "mg_next_pass"]["input_schema"]
        return ToolCall(OURS + "mg_next_pass", at_maximums(schema, account="osobni", since=since))
    if OURS + "mg_get_thread" not in done:
        pass_result = next(result for call, result in calls if call.name == OURS + "mg_next_pass")
        try:
            thread_id = find_thread(json.loads(result_text(pass_result or {})), LONG_SUBJECT)
        except ValueError:
            thread_id = None
        schema = tools[OURS + "mg_get_thread"]["input_schema"]
        arguments = at_maximums(schema, account="osobni", thread_id=thread_id or "0", bodies="all")
        return ToolCall(OURS + "mg_get_thread", arguments)
    reads = [call for call, _ in calls if call.name == OURS + "mg_get_message"]
    schema = tools[OURS + "mg_get_message"]["input_schema"]
    if not reads:
        return ToolCall(OURS + "mg_get_message", at_maximums(schema, account="osobni", message_id=LONG_MESSAGE_ID))
    if len(reads) == 1:
        return ToolCall(OURS + "mg_get_message", {"account": "osobni", "message_id": MISSING_MESSAGE_ID})
    return None


@dataclass(frozen=True)
class Session:
    """The last request of the conversation (the whole transcript the model read) and Claude Code's output."""

    last: dict[str, Any]
    output: str

    def texts(self) -> list[str]:
        """Everything the model read as text, block by block: the system prompt, every message block."""
        body = self.last
        parts = [system_text(body)]
        for message in body.get("messages", []):
            content = message.get("content")
            if isinstance(content, str):
                parts.append(content)
            elif isinstance(content, list):
                for block in content:
                    parts.append(block.get("text", "") if block.get("type") == "text" else result_text(block))
        return parts

    def instructions_of(self, server: str) -> str | None:
        """The instructions of `server` as the model read them (Claude Code's "## <server>" section,
        up to the next server's heading or the skills list Claude Code writes after the last one)."""
        heading = f"## {server}\n"
        for part in self.texts():
            if heading in part:
                section = part.split(heading, 1)[1]
                for end in ("\n\n## ", "\n\nThe following skills are available"):
                    section = section.split(end, 1)[0]
                return section
        return None

    def deferred_tools(self) -> list[str]:
        """The tool names Claude Code listed to the model at the start, schemas not loaded (ToolSearch)."""
        for part in self.texts():
            if "deferred tools are now available via ToolSearch" in part:
                listing = part.split("deferred tools are now available via ToolSearch", 1)[1]
                return listing.split(":\n", 1)[1].split("\n\n", 1)[0].splitlines()
        return []

    def result(self, name: str, **match: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The (call input, tool_result block) of the first call of `name` whose input has `match`."""
        for call, result in Conversation(self.last).calls():
            if call.name == name and all(call.input.get(k) == v for k, v in match.items()):
                assert result is not None, f"{name} has no result"
                return call.input, result
        raise AssertionError(f"the model never called {name} {match}: {self.output[-3000:]}")


def run_session(claude: str, vault: Path, env: dict[str, str]) -> dict[str, Any]:
    """`claude -p` in a subfolder of the vault, with the vault's server and a second one on a broken
    configuration, driven by `script` through the stand-in Messages API."""
    broken_entry = mcp_server_entry()
    broken_entry["args"] = [*broken_entry["args"][:-1], BROKEN_CONFIG]
    extra = json.dumps({"mcpServers": {BROKEN: broken_entry}})
    with messages_api(script) as api:
        done = subprocess.run(
            [
                claude,
                "-p",
                "Projdi mi novou poštu.",
                "--mcp-config",
                extra,
                "--allowedTools",
                f"mcp__{SERVER}",
                f"mcp__{BROKEN}",
                "--output-format",
                "stream-json",
                "--verbose",
            ],
            cwd=vault / SUBFOLDER,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            env={**env, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-stand-in"},
            timeout=TIMEOUT_S,
            check=False,
        )
        main = [r["body"] for r in api.requests if r["body"].get("tools") and r["path"] == "/v1/messages"]
    output = done.stdout.decode("utf-8", "replace") + done.stderr.decode("utf-8", "replace")
    return {"returncode": done.returncode, "output": output, "last": main[-1] if main else {}}


def record_everything(folder: Path) -> dict[str, Any]:
    """Every Claude Code run the tests look at, once: the connections and the scripted session."""
    claude = claude_binary()
    vault = make_vault(folder)
    old = old_vault(vault)
    with mailboxes(folder / "emulator") as emulator:
        long_mail(emulator)
        env = make_home(folder / "home", emulator, vault, vault / SUBFOLDER, old / SUBFOLDER)
        instructions, tool_names = server_facts(vault, env)
        connections = {
            "root": mcp_list(claude, vault, env),
            "subfolder": mcp_list(claude, vault / SUBFOLDER, env),
            "old-entry-subfolder": mcp_list(claude, old / SUBFOLDER, env),
        }
        session = run_session(claude, vault, env)
    protocols = negotiated_protocols(folder / "home", vault / SUBFOLDER)
    return {
        "instructions": instructions,
        "tool_names": tool_names,
        "connections": connections,
        "session": session,
        "protocols": protocols,
    }


@dataclass(frozen=True)
class Recorded:
    instructions: str
    tool_names: list[str]
    connections: dict[str, str]
    session: Session
    protocols: dict[str, str]


@pytest.fixture(scope="session")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The runs happen once per test run: under pytest-xdist the first worker to get here records
    them in the folder the workers share, the others read that record."""
    if os.environ.get("PYTEST_XDIST_WORKER") is None:  # a serial run
        data = record_everything(tmp_path_factory.mktemp("claude-code"))
    else:
        shared = tmp_path_factory.getbasetemp().parent
        record = shared / "claude-code-recorded.json"
        with exclusive(shared / "claude-code-recorded.lock"):
            if not record.is_file():
                fresh = record_everything(tmp_path_factory.mktemp("claude-code"))
                record.write_text(json.dumps(fresh, ensure_ascii=False), encoding="utf-8")
            data = json.loads(record.read_text(encoding="utf-8"))
    run = data["session"]
    session = Session(run["last"], run["output"])
    assert run["returncode"] == 0 and run["last"], run["output"][-4000:]
    report(session)
    return Recorded(data["instructions"], data["tool_names"], data["connections"], session, data["protocols"])


def report(session: Session) -> None:
    """What the model received, for the record (shown with -rA): sizes in characters."""
    for server in (SERVER, BROKEN):
        read = session.instructions_of(server)
        print(f"instructions of {server}: {'none' if read is None else len(read)}")
    print(f"instructions of {BROKEN} as read:\n{session.instructions_of(BROKEN)}")
    for call, result in Conversation(session.last).calls():
        text = result_text(result or {})
        flag = " isError" if (result or {}).get("is_error") else ""
        print(f"{call.name} {json.dumps(call.input, ensure_ascii=False)}:{flag} {len(text)} {text[:90]!r}")


# ------------------------------------------------------------------ the connection


@pytest.mark.parametrize("where", ["root", "subfolder"])
def test_claude_code_connects_from_the_vault_root_and_a_subfolder(recorded: Recorded, where: str) -> None:
    line = recorded.connections[where]
    assert line.endswith("✔ Connected"), line


def test_old_entry_fails_from_a_subfolder(recorded: Recorded) -> None:
    """The counter-example: the entry the READMEs gave before, relative to Claude Code's own folder."""
    line = recorded.connections["old-entry-subfolder"]
    assert "✘ Failed to connect" in line, line  # 2.1.332 adds the reason: "— CONNECTION_CLOSED: …"


def test_claude_code_speaks_the_stateless_protocol(recorded: Recorded) -> None:
    """The revision Claude Code negotiated with each server of the session, as `/mcp` shows it."""
    assert recorded.protocols == {SERVER: PROTOCOL, BROKEN: PROTOCOL}


# ------------------------------------------------------------------ what the model received


def test_instructions_reach_the_model_whole(recorded: Recorded) -> None:
    instructions = recorded.instructions
    read = recorded.session.instructions_of(SERVER)
    assert read is not None, "the server's instructions never reached the model"
    assert "[truncated]" not in read, f"the model read {len(read)} characters of {len(instructions)}: …{read[-120:]!r}"
    assert read.rstrip() == instructions.rstrip()


def test_every_tool_name_reaches_the_model_at_the_start(recorded: Recorded) -> None:
    """Only names load at the start (the schemas behind ToolSearch), so each name must be there."""
    listed = recorded.session.deferred_tools()
    assert recorded.tool_names and all(OURS + name in listed for name in recorded.tool_names), listed


@pytest.mark.parametrize(
    ("tool", "match"),
    [
        ("mg_next_pass", {}),
        ("mg_get_thread", {"bodies": "all"}),
        ("mg_get_message", {"message_id": LONG_MESSAGE_ID}),
    ],
    ids=["pass", "thread-all-bodies", "message"],
)
def test_results_at_schema_maximums_arrive_inline(recorded: Recorded, tool: str, match: dict[str, Any]) -> None:
    arguments, block = recorded.session.result(OURS + tool, **match)
    text = result_text(block)
    assert SAVED_NOTICE not in text and "saved to" not in text, f"{tool}{arguments}: {text[:300]}"
    assert block.get("is_error") is not True, text[:600]
    result = json.loads(text)  # structuredContent, as compact JSON
    assert isinstance(result, dict) and "error" not in result
    if tool == "mg_get_thread":
        assert result["subject"] == LONG_SUBJECT  # the long thread, its bodies in the budget
        assert result["messages"] and result["messages"][0]["body"]
    if tool == "mg_get_message":
        assert result["body"] and result["body_total_length"] >= 250_000
    print(f"{tool} at {arguments}: {len(text)} characters inline")


def test_an_error_reaches_the_model_readable(recorded: Recorded) -> None:
    _, block = recorded.session.result(OURS + "mg_get_message", message_id=MISSING_MESSAGE_ID)
    assert block.get("is_error") is True
    text = result_text(block)
    error = json.loads(text)["error"]
    assert error["code"] == "not_found" and MISSING_MESSAGE_ID in error["message"]
    assert error["retryable"] is False


def test_a_broken_configuration_reaches_the_model(recorded: Recorded) -> None:
    """Repair mode (docs/pro-asistenta-potize.md): the server on a configuration that does not load still connects; its
    instructions carry the report and the next step, and a mail tool answers config_invalid with it."""
    session = recorded.session
    section = session.instructions_of(BROKEN)
    assert section is not None, f"the server on {BROKEN_CONFIG} never connected: the model learnt nothing"
    assert "multigmail-broken.json" in section and BROKEN_KEY in section, section
    assert "mg_reload_config" in section and "[truncated]" not in section, section
    _, block = session.result(f"mcp__{BROKEN}__mg_list_accounts")
    assert block.get("is_error") is True
    error = json.loads(result_text(block))["error"]
    assert error["code"] == "config_invalid" and error["retryable"] is False
    assert BROKEN_KEY in error["message"]
