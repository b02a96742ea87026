"""The Python freight agent (examples/freight/agent.py) checks the world right before each effect: an
unchanged delivery lets the reschedule run; one a dispatcher moved after the approval is refused with
``world_changed`` and nothing after it runs.

The decision is signed here with a pinned key, with the reschedule's precondition bound as
Countersign's pipeline binds it from the tool's preview (issue 19, lane A); only the transport is
left out (submit, wait and outcomes answer from memory), ``verify_step`` is the client's own."""

from __future__ import annotations

import base64
import copy
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from conftest import REPO
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_transport import AGENT, SECRET, jwks_of

from countersign import Client, Outcome, Submitted, canonical_json, plan_digest, step_digest

sys.path.insert(0, str(REPO / "examples" / "freight"))
import agent as freight  # noqa: E402 - the example itself

KEY = Ed25519PrivateKey.generate()
RUN = "run-world-1"


def approved_decision() -> dict[str, Any]:
    steps = []
    for step in copy.deepcopy(freight.FREIGHT_PLAN["steps"]):
        decided = {**step, "digest": step_digest(step), "route": "review", "approvals": [],
                   "provenance": {"by": "agent", "userId": None, "version": 1, "change": None}}
        if step["tool"] == "reschedule_delivery":
            decided["preconditions"] = [{"type": "delivery", "id": "dl_55120", "version": "7"}]
        steps.append(decided)
    plan = {"runId": RUN, "agent": AGENT, "expiresAt": "2099-01-01T00:00:00Z", "steps": steps}
    unsigned = {"runId": RUN, "agent": AGENT, "status": "approved", "version": 1,
                "plan": {**plan, "digest": plan_digest(plan)}, "decidedAt": "2026-04-02T10:00:00Z",
                "decidedBy": "U0OP1", "reason": None, "phase": None, "diagnostics": [], "configDigest": "c0ffee"}
    signature = base64.urlsafe_b64encode(KEY.sign(canonical_json(unsigned).encode())).rstrip(b"=").decode()
    return {**unsigned, "receipt": {"alg": "EdDSA", "kid": jwks_of(KEY)["keys"][0]["kid"], "signature": signature}}


class InMemory(Client):
    """The client with its requests answered from memory; verification is untouched."""

    def __init__(self) -> None:
        super().__init__("http://127.0.0.1:9", AGENT, SECRET, public_keys=jwks_of(KEY))
        self.outcomes: list[tuple[str, str]] = []

    def submit(self, plan: Any, *, if_blocked: str | None = None) -> Submitted:
        return Submitted(run_id=RUN, status="pending")

    def wait_for_decision(self, run_id: str, timeout: float = 600.0) -> Any:
        return approved_decision()

    def report_outcome(self, run_id: str, step_id: str, status: str, detail: str | None = None) -> Outcome:
        self.outcomes.append((step_id, status))
        return Outcome(run_id=run_id, step_id=step_id, status=status, at="2026-04-02T10:01:00Z")


@pytest.fixture(autouse=True)
def fresh_world() -> Iterator[None]:
    versions = dict(freight.FREIGHT_VERSIONS)
    yield
    freight.FREIGHT_VERSIONS.clear()
    freight.FREIGHT_VERSIONS.update(versions)


def test_runs_every_step_when_the_world_is_as_approved() -> None:
    client = InMemory()
    _, executed = freight.run_freight_agent(client, log=lambda line: None)
    assert executed == ["s1", "s2", "s3"]


def test_refuses_the_reschedule_when_a_dispatcher_moved_the_delivery_after_approval() -> None:
    client, lines = InMemory(), []
    _, executed = freight.run_freight_agent(
        client, log=lines.append, after_approval=lambda _decision: lines.append(freight.move_delivery_after_approval())
    )
    assert executed == ["s1"]
    assert "a dispatcher moved delivery dl_55120 to 2026-04-07 after the approval (version 7 → 8)" in lines
    assert lines[-2:] == [
        "  ✗ s2: not executing (world_changed: delivery dl_55120 changed since it was approved (version 7 → 8): "
        "preview again and ask for approval again; do not apply)",
        "    submit the plan again so people approve the world as it is now",
    ]
    assert client.outcomes == [("s1", "applying"), ("s1", "applied")]  # s2 never claimed


def test_its_versions_are_the_example_datasets() -> None:
    """The agent's mirror of the dataset's versions (a stand-in for reading the freight systems)."""
    data = (REPO / "examples" / "freight" / "data.ts").read_text(encoding="utf-8")
    for (kind, entity_id), version in freight.FREIGHT_VERSIONS.items():
        row = data[data.index(f"id: '{entity_id}'"):]
        assert f"version: {version}" in row[: row.index("}")], (kind, entity_id)
