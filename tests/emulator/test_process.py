"""`python -m gmail_emulator` as a separate process: state file, TLS login, clean SIGTERM/SIGINT."""

from __future__ import annotations

import json
import signal
import ssl
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from imapclient import IMAPClient

from support import wait_until

ADDRESS, PASSWORD = "proc@example.com", "procprocprocproc"


def write_seed(tmp_path: Path) -> Path:
    (tmp_path / "hello.eml").write_bytes(
        b"From: friend@example.org\r\nTo: proc@example.com\r\nSubject: Hello process\r\n"
        b"Date: {{DATE:-1d}}\r\nMessage-ID: <hello-proc@example.org>\r\n\r\nHi!\r\n"
    )
    seed = {
        "accounts": [
            {
                "address": ADDRESS,
                "password": PASSWORD,
                "labels": ["Friends"],
                "messages": [{"eml": "hello.eml", "labels": ["\\Inbox", "Friends"], "internaldate": "-1d"}],
            }
        ]
    }
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(seed))
    return path


def start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "gmail_emulator", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_for_state(proc: subprocess.Popen[bytes], state: Path, timeout: float = 30.0) -> dict[str, Any]:
    def written() -> bool:
        if state.exists():
            return True
        if proc.poll() is not None:
            _out, err = proc.communicate()
            pytest.fail(f"the emulator exited early ({proc.returncode}): {err.decode(errors='replace')}")
        return False

    try:
        wait_until(written, timeout, "the emulator's state file")
    except AssertionError:
        proc.kill()
        proc.communicate()
        raise
    data: dict[str, Any] = json.loads(state.read_text())
    return data


def stop(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM) -> tuple[int, bytes, bytes]:
    proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return proc.returncode, out, err


def test_process_mode(tmp_path: Path) -> None:
    seed = write_seed(tmp_path)
    state_path = tmp_path / "run" / "s.json"
    proc = start(["--seed", str(seed), "--state", str(state_path), "--latency", "SELECT=0.01"], tmp_path)
    try:
        state = wait_for_state(proc, state_path)
        assert set(state) == {"imap_port", "smtp_ssl_port", "smtp_starttls_port", "ca_file", "host"}
        assert state["host"] == "127.0.0.1"
        ctx = ssl.create_default_context(cafile=state["ca_file"])
        with IMAPClient(state["host"], port=state["imap_port"], ssl=True, ssl_context=ctx, timeout=10) as client:
            client.login(ADDRESS, PASSWORD)
            client.select_folder("Friends", readonly=True)
            uids = client.search()
            assert len(uids) == 1
            header = client.fetch(uids, ["BODY.PEEK[HEADER.FIELDS (SUBJECT)]"])[uids[0]]
            assert b"Hello process" in header[b"BODY[HEADER.FIELDS (SUBJECT)]"]
    finally:
        code, out, err = stop(proc)
    assert code == 0, err.decode(errors="replace")
    assert out == b""
    assert b"listening on 127.0.0.1" in err
    assert not state_path.exists()


def test_process_sigint_workdir_and_the_oauth_client(tmp_path: Path) -> None:
    seed = write_seed(tmp_path)
    state_path = tmp_path / "s.json"
    workdir = tmp_path / "w"
    client = tmp_path / "klient.json"
    args = ["--seed", str(seed), "--state", str(state_path), "--workdir", str(workdir), "--oauth-client", str(client)]
    proc = start(args, tmp_path)
    try:
        state = wait_for_state(proc, state_path)
        assert Path(state["ca_file"]) == workdir / "ca.pem"
        installed = json.loads(client.read_text())["installed"]  # written before the state file
        assert installed["token_uri"].startswith("https://127.0.0.1:") and installed["client_secret"]
    finally:
        code, out, _err = stop(proc, signal.SIGINT)
    assert code == 0
    assert out == b""


def test_process_demo_seed(tmp_path: Path) -> None:
    state_path = tmp_path / "s.json"
    proc = start(["--demo", "--state", str(state_path)], tmp_path)
    try:
        state = wait_for_state(proc, state_path)
        assert state["imap_port"] > 0
    finally:
        code, out, _err = stop(proc)
    assert code == 0
    assert out == b""


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--latency", "FETCH"], b"COMMAND=SECONDS"),
        (["--seed", "missing.json"], b"cannot read the seed file"),
    ],
)
def test_process_bad_arguments(tmp_path: Path, args: list[str], expected: bytes) -> None:
    proc = start([*args, "--state", str(tmp_path / "s.json")], tmp_path)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2
    assert out == b""
    assert expected in err
    assert not (tmp_path / "s.json").exists()
