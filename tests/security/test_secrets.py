"""The canary app password never shows: not in configuration errors, passwords-file errors, login
failures, tool results, stderr, stdout or the emulator's wire log.

The autouse `leak_guard` (conftest) does the scanning after every test; these tests drive the
places where a password is most likely to slip out.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from security_support import ACCOUNTS, CANARY, CANARY_GROUPED, ME, TEAM, canary_forms, error_of, mail

from gmail_emulator import FaultRule, GmailEmulator, SmtpFault
from mcp_multi_gmail import cli
from mcp_multi_gmail.config import ConfigError, load_config
from mcp_multi_gmail.runtime import Runtime
from support import INITIALIZED, SERVER_SCRIPT, gmail_env, initialize_request

SCRIPT = SERVER_SCRIPT
GOOD_ACCOUNT = {"name": "o", "address": ME, "password": CANARY_GROUPED}


def _no_canary(text: str, where: str) -> None:
    for form in canary_forms():
        assert form not in text, f"the canary ({form!r}) is in the {where}: {text[:500]}"


# ------------------------------------------------------------------ configuration and passwords file


def _config(tmp_path: Path, body: object, *, raw: bytes | None = None) -> Path:
    path = tmp_path / "multigmail.json"
    if raw is not None:
        path.write_bytes(raw)
    else:
        path.write_text(json.dumps(body, ensure_ascii=False), encoding="utf-8")
    return path


def _passwords(tmp_path: Path, content: bytes) -> dict[str, Any]:
    (tmp_path / "hesla.json").write_bytes(content)
    return {"accounts": [{"name": "o", "address": ME}], "passwords_file": "hesla.json"}


BROKEN_CONFIGS: list[tuple[str, Callable[[Path], tuple[object, bytes | None]]]] = [
    ("unknown-key-beside-password", lambda t: ({"accounts": [{**GOOD_ACCOUNT, "pasword": CANARY}]}, None)),
    ("password-and-password-env", lambda t: ({"accounts": [{**GOOD_ACCOUNT, "password_env": "MG_HESLO"}]}, None)),
    ("password-as-list", lambda t: ({"accounts": [{**GOOD_ACCOUNT, "password": [CANARY]}]}, None)),
    ("password-as-number-key", lambda t: ({"accounts": [{**GOOD_ACCOUNT, "password": {CANARY: 1}}]}, None)),
    ("password-in-address", lambda t: ({"accounts": [{**GOOD_ACCOUNT, "address": CANARY}]}, None)),
    ("password-in-name", lambda t: ({"accounts": [{**GOOD_ACCOUNT, "name": CANARY_GROUPED}]}, None)),
    ("password-pasted-as-a-key", lambda t: ({"accounts": [{**GOOD_ACCOUNT, CANARY: ""}]}, None)),
    ("grouped-password-pasted-as-a-key", lambda t: ({"accounts": [{**GOOD_ACCOUNT, CANARY_GROUPED: "x"}]}, None)),
    ("password-pasted-as-top-level-key", lambda t: ({"accounts": [GOOD_ACCOUNT], CANARY: True}, None)),
    (
        "password-pasted-into-password-env",
        lambda t: ({"accounts": [{"name": "o", "address": ME, "password_env": CANARY}]}, None),
    ),
    (
        "grouped-password-pasted-into-password-env",
        lambda t: ({"accounts": [{"name": "o", "address": ME, "password_env": CANARY_GROUPED}]}, None),
    ),
    (
        "invalid-json-with-password",
        lambda t: (None, f'{{"accounts": [{{"name": "o", "password": "{CANARY_GROUPED}",}}]}}'.encode()),
    ),
    (
        "json-error-right-at-the-password",
        lambda t: (None, f'{{"accounts": [{{"name": "o", "password": {CANARY}}}]}}'.encode()),
    ),
    ("not-utf8-with-password", lambda t: (None, f'{{"password": "{CANARY}\xff"}}'.encode("latin-1"))),
    ("passwords-file-invalid-json", lambda t: (_passwords(t, f'{{"o": "{CANARY}",}}'.encode()), None)),
    ("passwords-file-a-list", lambda t: (_passwords(t, json.dumps([CANARY]).encode()), None)),
    ("passwords-file-value-not-text", lambda t: (_passwords(t, json.dumps({"o": [CANARY]}).encode()), None)),
    ("passwords-file-wrong-name", lambda t: (_passwords(t, json.dumps({"jina": CANARY}).encode()), None)),
    ("passwords-file-reversed", lambda t: (_passwords(t, json.dumps({CANARY: "o"}).encode()), None)),
    ("passwords-file-not-utf8", lambda t: (_passwords(t, f'{{"o": "{CANARY}\xfe"}}'.encode("latin-1")), None)),
    (
        "passwords-file-and-literal",
        lambda t: (
            {**_passwords(t, json.dumps({"o": CANARY}).encode()), "accounts": [GOOD_ACCOUNT, GOOD_ACCOUNT]},
            None,
        ),
    ),
    (
        "passwords-file-missing",
        lambda t: ({"accounts": [{"name": "o", "address": ME}], "passwords_file": "chybi.json"}, None),
    ),
    (
        "bad-classifications-beside-password",
        lambda t: (
            {"accounts": [{**GOOD_ACCOUNT, "classification_labels": {"\\Inbox": "x", "a": "", "A": "y"}}]},
            None,
        ),
    ),
]


@pytest.mark.parametrize(("name", "make"), BROKEN_CONFIGS, ids=[n for n, _ in BROKEN_CONFIGS])
def test_configuration_errors_never_quote_the_password(
    name: str,
    make: Callable[[Path], tuple[object, bytes | None]],
    tmp_path: Path,
    emulator: GmailEmulator,
    capfd: pytest.CaptureFixture[str],
    counts: Counter[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body, raw = make(tmp_path)
    path = _config(tmp_path, body, raw=raw)
    environ = {**gmail_env(emulator), "MG_HESLO": CANARY}
    with pytest.raises(ConfigError) as caught:
        load_config(path, layout=None, environ=environ)
    _no_canary(caught.value.message, f"configuration error for {name}")
    _no_canary(str(caught.value), f"configuration error for {name}")

    # The same file through the command line: Czech report on stderr, nothing on stdout, and repair
    # mode (its instructions and the error every mail tool gives), which ends with exit 1.
    served: list[Any] = []

    def client_goes_at_once(server: Any, exit_code: Callable[[], int]) -> int:
        served.append(server)
        return exit_code()

    monkeypatch.setattr(cli, "_run_stdio", client_goes_at_once)
    with pytest.raises(SystemExit) as exited:
        cli.main(["--config", str(path)])
    assert exited.value.code == 1
    out, err = capfd.readouterr()
    assert out == ""
    assert "nastavení" in err.lower() or "soubor" in err.lower(), err
    _no_canary(out + err, f"command line output for {name}")
    [server] = served
    assert server.runtime.repair is not None
    _no_canary(server.instructions, f"repair-mode instructions for {name}")
    _no_canary(server.runtime.repair.error().message, f"repair-mode tool error for {name}")
    counts["hostile"] += 1


@pytest.mark.anyio
async def test_reload_with_a_broken_config_keeps_the_password_out(
    make_runtime: Callable[..., Runtime], call: Callable[..., Any], tmp_path: Path
) -> None:
    runtime = make_runtime()
    for name, make in BROKEN_CONFIGS:
        body, raw = make(tmp_path)
        _config(tmp_path, body, raw=raw)
        result = await call(runtime, "mg_reload_config", {})
        error = error_of(result)
        assert error is not None and error["code"] == "config_invalid", (name, error)
    listed = await call(runtime, "mg_list_accounts", {})
    assert listed.is_error is False  # the running settings stayed


# ------------------------------------------------------------------ login failures


@pytest.fixture
def wrong_password(emulator: GmailEmulator) -> GmailEmulator:
    """The configuration says the canary, Gmail expects something else: every login fails."""
    emulator.reset()
    for address in ACCOUNTS:
        emulator.add_account(address, "jineheslojineheslo"[:16])
    emulator.deliver(ME, mail("dotaz-1@partner.example"))
    return emulator


@pytest.mark.anyio
async def test_refused_logins_never_show_the_password(
    wrong_password: GmailEmulator, make_runtime: Callable[..., Runtime], call: Callable[..., Any]
) -> None:
    runtime = make_runtime(smtp_port=None)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("mg_get_message", {"account": "o", "message_id": "dotaz-1@partner.example"}),
        ("mg_search_threads", {"account": "all", "query": "ceník"}),
        ("mg_next_pass", {"account": "o", "since": "2026-01-01"}),
        ("mg_label_message", {"account": "o", "message_ids": ["dotaz-1@partner.example"], "label": "Asistent"}),
        ("mg_send_message", {"account": "o", "to": ["a@partner.example"], "subject": "x", "body": "y"}),
    ]
    for tool, args in calls:
        result = await call(runtime, tool, args)
        if tool == "mg_search_threads":
            assert result.structured_content["failures"][0]["code"] == "auth_failed"
        else:
            error = error_of(result)
            assert error is not None and error["code"] == "auth_failed", (tool, error)
    verified = await call(runtime, "mg_list_accounts", {"verify": True})
    assert {f["check"] for f in verified.structured_content["failures"]} == {"imap", "smtp"}
    assert wrong_password.outbox() == []


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("kind", "code", "retryable"),
    [
        ("invalid", "auth_failed", False),
        ("app_password", "auth_failed", False),
        # Not a password problem: a new app password would not help, so they are not auth_failed.
        ("too_many", "upstream_error", True),
        ("unavailable", "upstream_error", True),
        ("overquota", "upstream_error", False),
        ("imap_disabled", "auth_failed", False),
        ("webalert", "upstream_error", False),
    ],
)
async def test_gmail_login_refusals_never_show_the_password(
    kind: str,
    code: str,
    retryable: bool,
    emulator: GmailEmulator,
    make_runtime: Callable[..., Runtime],
    call: Callable[..., Any],
) -> None:
    emulator.add_fault(FaultRule(action=f"refuse_login:{kind}", times=-1))
    result = await call(make_runtime(), "mg_list_labels", {"account": "o"})
    error = error_of(result)
    assert error is not None and (error["code"], error["retryable"]) == (code, retryable)


@pytest.mark.anyio
@pytest.mark.parametrize("action", ["535", "534", "421", "drop"])
async def test_smtp_login_refusals_never_show_the_password(
    action: str, emulator: GmailEmulator, make_runtime: Callable[..., Runtime], call: Callable[..., Any]
) -> None:
    emulator.add_smtp_fault(SmtpFault(stage="auth", action=action, times=-1))  # type: ignore[arg-type]
    runtime = make_runtime(smtp_port=None)
    sent = await call(
        runtime, "mg_send_message", {"account": "o", "to": ["a@partner.example"], "subject": "x", "body": "y"}
    )
    error = error_of(sent)
    assert error is not None and error["code"] in ("auth_failed", "upstream_error")
    verified = await call(runtime, "mg_list_accounts", {"verify": True})
    assert [f["check"] for f in verified.structured_content["failures"]] == ["smtp"]
    assert emulator.outbox() == []


@pytest.mark.anyio
async def test_successful_work_never_shows_the_password(
    emulator: GmailEmulator, make_runtime: Callable[..., Runtime], call: Callable[..., Any]
) -> None:
    """Logins that succeed put the canary on the wire (LOGIN, AUTH PLAIN); the log must redact it."""
    emulator.deliver(ME, mail("dotaz-1@partner.example"))
    runtime = make_runtime(smtp_port=None)
    listed = await call(runtime, "mg_list_accounts", {"verify": True})
    assert listed.structured_content["failures"] == []
    sent = await call(
        runtime, "mg_send_message", {"account": "o", "to": ["a@partner.example"], "subject": "x", "body": "y"}
    )
    assert sent.is_error is False
    read = await call(runtime, "mg_get_message", {"account": "o", "message_id": "dotaz-1@partner.example"})
    assert read.is_error is False
    assert any(c.name == "LOGIN" for c in emulator.commands())


# ------------------------------------------------------------------ the real process over stdio


def _env(emulator: GmailEmulator, state_dir: Path) -> dict[str, str]:
    return {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", ""),
        "MG_WATCH_DIR": str(state_dir),
        **gmail_env(emulator),
    }


@pytest.mark.anyio
async def test_server_process_keeps_the_password_off_stdout_and_stderr(emulator: GmailEmulator, tmp_path: Path) -> None:
    emulator.deliver(ME, mail("dotaz-1@partner.example"))
    emulator.reset_counters()
    config = {
        "accounts": [
            {"name": "o", "address": ME, "password": CANARY_GROUPED, "can_send": True},
            # Gmail does not know this password for tym@: every login of this mailbox is refused.
            {"name": "t", "address": TEAM, "password": CANARY[::-1]},
        ]
    }
    path = _config(tmp_path, config)
    errlog = tmp_path / "stderr.txt"
    params = StdioServerParameters(command=str(SCRIPT), args=["--config", str(path)], env=_env(emulator, tmp_path))
    texts: list[str] = []
    with errlog.open("w") as stderr:
        async with Client(stdio_client(params, errlog=stderr)) as client:
            calls: list[tuple[str, dict[str, Any]]] = [
                ("mg_list_accounts", {"verify": True}),
                ("mg_get_message", {"account": "o", "message_id": "dotaz-1@partner.example"}),
                ("mg_get_message", {"account": "t", "message_id": "dotaz-1@partner.example"}),
                ("mg_send_message", {"account": "o", "to": ["a@partner.example"], "subject": "x", "body": "y"}),
            ]
            for tool, args in calls:
                result = await client.call_tool(tool, args)
                texts.append(json.dumps(result.structured_content, ensure_ascii=False))
                texts.extend(getattr(block, "text", "") for block in result.content)
            path.write_text(json.dumps({"accounts": [{**config["accounts"][0], "heslo": CANARY}]}), encoding="utf-8")
            reloaded = await client.call_tool("mg_reload_config", {})
            assert reloaded.is_error is True
            texts.append(json.dumps(reloaded.structured_content, ensure_ascii=False))
    _no_canary("\n".join(texts), "tool results over stdio")
    _no_canary(errlog.read_text(), "server's stderr")
    _no_canary("\n".join(e.data.decode("latin-1") for e in emulator.wire_log()), "emulator wire log")


def test_server_process_with_a_broken_config_keeps_the_password_off_stderr(tmp_path: Path) -> None:
    path = _config(tmp_path, {"accounts": [{**GOOD_ACCOUNT, CANARY: CANARY, "password_env": CANARY}]})
    done = subprocess.run(
        [str(SCRIPT), "--config", str(path)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env={"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")},
        timeout=60,
    )
    assert done.returncode == 1 and done.stdout == ""
    _no_canary(done.stderr, "server's stderr")


def _rpc_line(proc: subprocess.Popen[bytes], line: bytes) -> None:
    assert proc.stdin is not None
    proc.stdin.write(line + b"\n")
    proc.stdin.flush()


def _stdout_lines(proc: subprocess.Popen[bytes]) -> queue.Queue[bytes]:
    """Every stdout line of the server, read in a thread so that a missing reply cannot hang the test."""
    lines: queue.Queue[bytes] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
        lines.put(b"")

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _reply(lines: queue.Queue[bytes], request_id: int, seen: list[bytes]) -> dict[str, Any]:
    """The reply to request_id; every line on the way must be JSON-RPC."""
    while True:
        line = lines.get(timeout=30)
        assert line, "the server closed stdout"
        seen.append(line)
        message = json.loads(line)
        assert message.get("jsonrpc") == "2.0"
        if message.get("id") == request_id:
            reply: dict[str, Any] = message
            return reply


def test_invalid_utf8_over_stdio_is_refused_and_the_server_lives_on(emulator: GmailEmulator, tmp_path: Path) -> None:
    """Raw JSON-RPC with invalid UTF-8 bytes inside arguments, a lone surrogate escape and a line of
    binary junk: the server answers what it can parse, stays up, and stdout carries only JSON-RPC.

    (A request whose JSON holds a lone surrogate escape is dropped by the MCP SDK's JSON parser
    before it reaches a tool; in-process tests give the tools such strings directly.)"""
    emulator.deliver(ME, mail("dotaz-1@partner.example"))
    path = _config(tmp_path, {"accounts": [{"name": "o", "address": ME, "password": CANARY_GROUPED}]})
    proc = subprocess.Popen(
        [str(SCRIPT), "--config", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(emulator, tmp_path),
    )
    lines = _stdout_lines(proc)
    seen: list[bytes] = []
    tool = b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "%s", "arguments": %s}}'
    try:
        _rpc_line(proc, json.dumps(initialize_request("raw")).encode())
        _reply(lines, 1, seen)
        _rpc_line(proc, json.dumps(INITIALIZED).encode())
        _rpc_line(proc, tool % (2, b"mg_search_threads", b'{"account": "o", "query": "cen\xff\xfe\xc3"}'))
        assert "result" in _reply(lines, 2, seen)
        _rpc_line(proc, tool % (3, b"mg_search_threads", b'{"account": "o", "query": "cen\\udcff"}'))
        _rpc_line(proc, b"\xff\xfe\x00 not json at all")
        _rpc_line(proc, tool % (4, b"mg_get_message", b'{"account": "o", "message_id": "dotaz-1@partner.example"}'))
        assert _reply(lines, 4, seen)["result"]["isError"] is False
        _rpc_line(proc, tool % (5, b"mg_get_message", b'{"account": "o", "message_id": "\xff\xfe@x"}'))
        answer = _reply(lines, 5, seen)["result"]
        assert answer["isError"] is True and "structuredContent" not in answer
        error = json.loads(answer["content"][0]["text"])["error"]
        assert error["code"] in ("not_found", "invalid_input")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)
        errors = proc.stderr.read() if proc.stderr is not None else b""
        if proc.stderr is not None:
            proc.stderr.close()
    while (line := lines.get(timeout=30)) != b"":
        json.loads(line)  # nothing but JSON-RPC on stdout
    if proc.stdout is not None:
        proc.stdout.close()
    assert proc.returncode == 0
    _no_canary(errors.decode("utf-8", "replace") + b"".join(seen).decode("utf-8", "replace"), "server output")
