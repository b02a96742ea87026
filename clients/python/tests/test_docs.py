"""docs/python-client.md works when followed literally: its shell blocks run as written (with the
scratch files moved to a temporary directory) against ``npm run local-stack``, which the doc starts."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from conftest import REPO, Countersign

DOC = (REPO / "docs" / "python-client.md").read_text(encoding="utf-8")
SHELL_BLOCKS = re.findall(r"```sh\n(.*?)```", DOC, re.S)


def block(containing: str) -> str:
    (found,) = [b for b in SHELL_BLOCKS if containing in b]
    return found


def bash(script: str) -> str:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_package_imports_as_the_install_section_says() -> None:
    assert bash(block("PYTHONPATH=clients/python")).strip() == "0.1.0"


def test_the_local_stack_command_is_the_one_the_tests_start() -> None:
    assert "npm run -s local-stack" in block("local-stack")


def test_the_freight_walkthrough_runs_the_example_agent_to_an_approved_and_executed_plan(
    countersign: Countersign, tmp_path: Path
) -> None:
    """The walkthrough's commands as written; the person pressing Approve on the page is the fixture."""
    ready = tmp_path / "countersign.json"
    ready.write_text(json.dumps({"url": countersign.url, "agent": countersign.agent, "secret": countersign.secret,
                                 "page": countersign.page}) + "\n")
    walkthrough = block("cs_ready").replace("/tmp/countersign.json", str(ready))
    agent = subprocess.Popen(["bash", "-euo", "pipefail", "-c", walkthrough], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert agent.stdout is not None
    first = agent.stdout.readline()
    run_id = re.match(r"submitted run ([^;]+);", first)
    assert run_id, first
    assert countersign.approve(run_id.group(1))["status"] == 200
    output = first + agent.stdout.read()
    assert agent.wait(timeout=60) == 0, output
    assert "decision: approved by U0OP1" in output
    for step_id in ("s1", "s2", "s3"):
        assert f"✓ {step_id} verified" in output
    assert "→ send_reply(" in output
