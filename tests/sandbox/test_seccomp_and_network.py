"""The seccomp filter and the network: what a sandboxed command can call and reach.

The network tests serve HTTP on one of this machine's own (non-loopback) addresses, which
a sandbox reaches only through the host-side proxy and only when its domain list allows.
"""

from __future__ import annotations

import http.server
import os
import subprocess
import threading
from pathlib import Path
from typing import Iterator

import pytest

from nbtoolsched.sandbox import NetworkPolicy, SandboxPolicy, availability

from .conftest import REQUIRED, require_root_tools
from .helpers import run_in_sandbox

PTRACE = "import ctypes; l = ctypes.CDLL(None, use_errno=True); print('ptrace', l.ptrace(0, 0, 0, 0), ctypes.get_errno())"
IO_URING = ("import ctypes; l = ctypes.CDLL(None, use_errno=True); b = ctypes.create_string_buffer(120); "
            "print('uring', l.syscall(425, 1, b), ctypes.get_errno())")
UNIX = ("import socket, errno\ntry:\n  socket.socket(socket.AF_UNIX); print('unix ok')\nexcept OSError as e: print('unix', e.errno)\n"
        "a, b = socket.socketpair(); print('pair ok')")


@pytest.fixture(params=["root", "nobody"])
def user(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "nobody":
        require_root_tools()
    return str(request.param)


@pytest.fixture
def folder(user: str, tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    return tmp_path if user == "root" else request.getfixturevalue("nobody_dir")


def _python(code: str) -> str:
    return f'python3 -c "{code}"'


def test_seccomp_refuses_ptrace_io_uring_and_new_unix_sockets(folder: Path, user: str) -> None:
    if availability().seccomp:
        pytest.fail(f"the seccomp filter must be testable here: {availability().seccomp}")
    policy = SandboxPolicy("write", (str(folder),))
    ran = run_in_sandbox(policy, f"{_python(PTRACE)}; {_python(IO_URING)}", folder, nobody=user == "nobody")
    assert "ptrace -1 1" in ran.out and "uring -1 1" in ran.out, ran.text
    ran = run_in_sandbox(policy, "python3 -c \"$CODE\"", folder, nobody=user == "nobody", env=dict(os.environ, CODE=UNIX))
    assert "unix 1" in ran.out and "pair ok" in ran.out, ran.text
    # The same calls without the filter: the test can tell.
    unfiltered = SandboxPolicy("write", (str(folder),), seccomp=False)
    ran = run_in_sandbox(unfiltered, f"{_python(PTRACE)}", folder, nobody=user == "nobody")
    assert "ptrace 0 0" in ran.out, ran.text


def _host_address() -> str | None:
    out = subprocess.run(["ip", "-4", "-o", "addr", "show", "scope", "global"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if "inet" in parts:
            return parts[parts.index("inet") + 1].split("/")[0]
    return None


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        body = b"hello from the host\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def server() -> Iterator[tuple[str, int]]:
    address = _host_address()
    if address is None:
        if REQUIRED:
            pytest.fail("the network tests need a non-loopback address on this machine")
        pytest.skip("no non-loopback address here")
    httpd = http.server.ThreadingHTTPServer((address, 0), _Hello)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield address, httpd.server_address[1]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_there_is_no_network_by_default(folder: Path, user: str, server: tuple[str, int]) -> None:
    host, port = server
    ran = run_in_sandbox(SandboxPolicy("write", (str(folder),)), f"curl -sS -m 5 http://{host}:{port}/", folder,
                         nobody=user == "nobody")
    assert ran.code != 0 and "hello" not in ran.out, ran.text
    subprocess.run(["curl", "-sS", "-m", "5", f"http://{host}:{port}/"], check=True, capture_output=True)  # the host reaches it


# The proxy runs as the agent's user, and only that user reaches its socket (mode 0700):
# started here by root, so the proxied cases run as root. (As nobody they would need a
# Python nobody can run; this machine's interpreter lives under root's home.)
def test_an_allowed_domain_is_reached_through_the_proxy_and_others_are_refused(tmp_path: Path, server: tuple[str, int]) -> None:
    host, port = server
    folder, user = tmp_path, "root"
    policy = SandboxPolicy("write", (str(folder),), network=NetworkPolicy(allowed_domains=(host, "127.0.0.1")))
    ran = run_in_sandbox(policy, f"curl -sS -m 10 http://{host}:{port}/; echo; "
                         "curl -sS -m 10 -o /dev/null -w '%{http_code}\\n' http://203.0.113.7/; "
                         "curl -sS -m 10 -o /dev/null -w '%{http_code}\\n' --noproxy '' http://127.0.0.1:1/; "
                         f"curl -sS -m 10 https://{host}:1/ 2>&1 | tail -1; {_python('import socket; socket.socket(socket.AF_UNIX)')}",
                         folder, nobody=user == "nobody")
    lines = ran.out.splitlines()
    assert lines[0] == "hello from the host", ran.text
    assert lines[2] == "403", ran.text  # not on the list
    assert lines[3] == "403", ran.text  # on the list, but it is this machine's loopback
    if not availability().seccomp:
        assert "Operation not permitted" in ran.err, ran.text  # the filter holds behind the bridge too


def test_a_denied_domain_wins_over_an_allowed_one(tmp_path: Path, server: tuple[str, int]) -> None:
    host, port = server
    folder, user = tmp_path, "root"
    policy = SandboxPolicy("write", (str(folder),), network=NetworkPolicy(allowed_domains=("*",), denied_domains=(host,)))
    ran = run_in_sandbox(policy, f"curl -sS -m 10 -o /dev/null -w '%{{http_code}}' http://{host}:{port}/", folder,
                         nobody=user == "nobody")
    assert ran.out.strip() == "403", ran.text


def test_a_read_only_command_has_no_network_whatever_the_domains(folder: Path, server: tuple[str, int]) -> None:
    host, port = server
    policy = SandboxPolicy("write", (str(folder),), network=NetworkPolicy(allowed_domains=(host,))).read_only()
    ran = run_in_sandbox(policy, f"curl -sS -m 5 http://{host}:{port}/", folder)
    assert ran.code != 0 and "hello" not in ran.out
