"""Shared fixtures: the repository's test vectors, and a real Countersign (``npm run local-stack``) for the end-to-end tests."""

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
LOCAL_STACK = ["npm", "run", "-s", "local-stack"]
START_TIMEOUT_SECONDS = 90
STOP_TIMEOUT_SECONDS = 15


def read_vectors(name: str) -> Any:
    """A vector file of test/vectors, read as it is (never copied into this package)."""
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Countersign:
    """A running Countersign (``npm run local-stack``): the freight example plus the MCP gateway's agent."""

    url: str
    agent: str
    secret: str
    gateway_agent: str
    gateway_secret: str
    page: str

    def approve(self, run_id: str, user: str = "U0OP1", timeout: float = 30) -> dict[str, Any]:
        """Clicks Approve on the run's card as ``user``, through the Slack stand-in's page API — the
        request its web page sends for a click. Waits for the card to be posted."""
        deadline = time.monotonic() + timeout
        while True:
            state = _json("GET", f"{self.page}page/api/state?user={user}")
            for message in state["messages"]:
                metadata = message.get("metadata") or {}
                if metadata.get("event_type") != "countersign_card":
                    continue
                if metadata.get("event_payload", {}).get("run_id") != run_id:
                    continue
                button = _button(message.get("blocks", []), "approve")
                if button is not None:
                    return _json("POST", f"{self.page}page/api/action", {
                        "user": user,
                        "container": {"type": "message", "channel": message["channel"], "ts": message["ts"]},
                        "action": button,
                    })
            if time.monotonic() > deadline:
                raise TimeoutError(f"no card with an Approve button for run {run_id}")
            time.sleep(0.2)


def _button(blocks: list[dict[str, Any]], action_id: str) -> dict[str, Any] | None:
    for index, block in enumerate(blocks):
        for element in block.get("elements", []) if block.get("type") == "actions" else []:
            if element.get("type") == "button" and element.get("action_id") == action_id:
                found = {"type": "button", "actionId": action_id, "blockId": block.get("block_id", f"block-{index}"),
                         "text": element["text"]["text"]}
                if "value" in element:
                    found["value"] = element["value"]
                return found
    return None


def _json(method: str, url: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


@pytest.fixture(scope="session")
def countersign() -> Iterator[Countersign]:
    """Starts ``npm run local-stack`` (redis-server, the Slack stand-in and Countersign) as the docs
    do, reads its JSON line, and stops it with SIGINT — Ctrl-C — at the end. Its output after the
    first line is drained, so it never blocks on a full pipe."""
    process = subprocess.Popen(
        LOCAL_STACK,
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: npm, tsx and node get the SIGINT together
    )
    assert process.stdout is not None
    try:
        line = _first_line(process, START_TIMEOUT_SECONDS)
        threading.Thread(target=process.stdout.read, daemon=True).start()
        ready = json.loads(line)
        yield Countersign(ready["url"], ready["agent"], ready["secret"], ready["gatewayAgent"],
                          ready["gatewaySecret"], ready["page"])
    finally:
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise RuntimeError("npm run local-stack did not stop on SIGINT") from None


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
    raise RuntimeError(f"npm run local-stack did not start (exit code {process.poll()})")
