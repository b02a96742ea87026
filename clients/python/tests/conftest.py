"""Shared fixtures: the repository's test vectors, and a real Countersign for the end-to-end tests."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[3]
VECTORS = REPO / "test" / "vectors"
HARNESS = REPO / "test" / "support" / "python-e2e-server.ts"
START_TIMEOUT_SECONDS = 90


def read_vectors(name: str) -> Any:
    """A vector file of test/vectors, read as it is (never copied into this package)."""
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Countersign:
    """A running Countersign with the freight example, started by the TypeScript harness."""

    url: str
    agent: str
    secret: str
    control: str

    def approve(self, run_id: str, user: str = "U0OP1") -> dict[str, Any]:
        """Clicks Approve on the run's card in the Slack stand-in, as ``user``."""
        request = urllib.request.Request(f"{self.control}/runs/{run_id}/approve?user={user}", method="POST")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


@pytest.fixture(scope="session")
def countersign() -> Iterator[Countersign]:
    """Starts redis-server, the Slack stand-in and Countersign (``npx tsx`` the harness); stops them
    all at the end. The harness also stops when its stdin closes, so it dies with this process; its
    output after the first line is drained, so it never blocks on a full pipe."""
    process = subprocess.Popen(
        ["npx", "tsx", str(HARNESS), "--exit-on-stdin-eof"],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: npx, tsx and node are stopped together
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        line = _first_line(process, START_TIMEOUT_SECONDS)
        threading.Thread(target=process.stdout.read, daemon=True).start()
        ready = json.loads(line)
        yield Countersign(ready["url"], ready["agent"], ready["secret"], ready["control"])
    finally:
        process.stdin.close()  # the harness stops everything it started
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _first_line(process: subprocess.Popen[str], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        readable, _, _ = select.select([process.stdout], [], [], 0.5)
        if readable:
            line = process.stdout.readline()
            if line.startswith("{"):
                return line
            if line == "":
                break
        elif process.poll() is not None:
            break
    raise RuntimeError(f"the Countersign harness did not start (exit code {process.poll()})")
