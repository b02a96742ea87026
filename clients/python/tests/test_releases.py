"""Plans with dependencies, from the Python agent's side, against the scripted stand-in: releases read
and waited for, verify_step on a release, and the dependency check that asks Countersign which steps
are applied — failing closed when it cannot ask. Receipts are signed by a key pinned for the test."""

from __future__ import annotations

import base64
import copy

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from conftest import read_vectors
from test_transport import AGENT, SECRET, StandIn, jwks_of, stand_in  # noqa: F401 - the fixture

from countersign import Client, DecisionTimeout, VerificationError, canonical_json, plan_digest, step_digest

KEY = Ed25519PrivateKey.generate()
NOW = 1_775_124_000.0
RUN = "run-deps-1"
# s2 (the reply) depends on s1 (the rebooking).
STEPS = [
    {"id": "s1", "tool": "reschedule_delivery", "args": {"delivery_id": "dl_1", "window": "2026-04-03"}},
    {"id": "s2", "tool": "send_reply", "args": {"ticket_id": "1", "body": "Rebooked."}, "dependsOn": ["s1"]},
]


def signed(unsigned: dict, key: Ed25519PrivateKey = KEY) -> dict:
    signature = key.sign(canonical_json(unsigned).encode())
    kid = jwks_of(key)["keys"][0]["kid"]
    encoded = base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    return {**unsigned, "receipt": {"alg": "EdDSA", "kid": kid, "signature": encoded}}


def approved_plan() -> dict:
    steps = [
        {**s, "digest": step_digest(s), "route": "review", "approvals": [],
         "provenance": {"by": "agent", "userId": None, "version": 1, "change": None}}
        for s in copy.deepcopy(STEPS)
    ]
    plan = {"runId": RUN, "agent": AGENT, "expiresAt": "2099-01-01T00:00:00Z", "steps": steps}
    return {**plan, "digest": plan_digest(plan)}


def release_of(step_id: str, **changes: object) -> dict:
    return signed({"kind": "release", "runId": RUN, "agent": AGENT, "version": 1, "plan": approved_plan(),
                   "stepId": step_id, "releasedAt": "2026-04-02T10:00:00Z", "configDigest": "c0ffee", **changes})


def decision(**changes: object) -> dict:
    return signed({"runId": RUN, "agent": AGENT, "status": "approved", "version": 1, "plan": approved_plan(),
                   "decidedAt": "2026-04-02T10:00:00Z", "decidedBy": "U1", "reason": None, "phase": None,
                   "diagnostics": [], "configDigest": "c0ffee", **changes})


def status_with(applied: list[str]):  # noqa: ANN201 - a stand-in script
    return lambda seen: (200, {}, {"runId": RUN, "status": "approved", "applied": applied, "steps": []})


def client(url: str = "http://127.0.0.1:9") -> Client:
    return Client(url, AGENT, SECRET, public_keys=jwks_of(KEY), clock=lambda: NOW, attempts=1)


def test_a_release_lets_its_own_step_run_and_no_other() -> None:
    assert client().verify_step(release_of("s1"), STEPS[0]).step["id"] == "s1"
    with pytest.raises(VerificationError) as refused:
        client().verify_step(release_of("s1"), STEPS[1])
    assert refused.value.reason == "not_released"
    with pytest.raises(VerificationError) as foreign:
        client().verify_step(release_of("s1", agent="billing"), STEPS[0])
    assert foreign.value.reason == "not_released"


def test_a_rejected_decision_says_a_released_step_runs_only_by_its_release() -> None:
    rejected = decision(status="rejected", plan=None,
                        released=[{"stepId": "s1", "releasedAt": "2026-04-02T10:00:00Z", "outcome": "applied"}])
    with pytest.raises(VerificationError) as refused:
        client().verify_step(rejected, STEPS[0])
    assert refused.value.reason == "not_approved"
    assert "only its release lets it run" in refused.value.message


def test_no_action_bypasses_an_unmet_dependency(stand_in: StandIn) -> None:
    stand_in.script = [status_with([]), status_with(["s2"])]
    for grant in (decision(), release_of("s2")):
        with pytest.raises(VerificationError) as refused:
            client(stand_in.url).verify_step(grant, STEPS[1])
        assert refused.value.reason == "dependency_not_applied"
        assert "s1" in refused.value.message
    # The step as if it had no dependencies is not the step approved.
    with pytest.raises(VerificationError) as undeclared:
        client(stand_in.url).verify_step(decision(), {**STEPS[1], "dependsOn": []})
    assert undeclared.value.reason == "digest_mismatch"
    assert [seen.target for seen in stand_in.seen] == [f"/v1/runs/{RUN}"] * 2


def test_fails_closed_when_countersign_cannot_be_asked(stand_in: StandIn) -> None:
    stand_in.script = [lambda seen: None]
    with pytest.raises(VerificationError) as refused:
        client(stand_in.url).verify_step(decision(), STEPS[1])
    assert refused.value.reason == "dependency_not_applied"
    assert "could not be asked" in refused.value.message


def test_asks_only_for_steps_with_dependencies_and_passes_once_they_are_applied(stand_in: StandIn) -> None:
    stand_in.script = [status_with(["s1"])]
    agent = client(stand_in.url)
    assert agent.verify_step(decision(), STEPS[0]).step["id"] == "s1"
    assert stand_in.seen == []
    without_own = {k: v for k, v in STEPS[1].items() if k != "dependsOn"}  # the approved ones stand
    assert agent.verify_step(decision(), without_own).step["dependsOn"] == ["s1"]
    assert len(stand_in.seen) == 1 and stand_in.seen[0].signed_correctly


def releases_answer(status: str, *releases: dict):  # noqa: ANN201 - a stand-in script
    return lambda seen: (200, {}, {"runId": RUN, "status": status, "releases": list(releases)})


def test_waits_for_the_steps_release_passing_on_how_many_it_holds(stand_in: StandIn) -> None:
    other, mine = release_of("s1"), release_of("s2")
    stand_in.script = [releases_answer("pending", other), releases_answer("pending", other, mine)]
    assert client(stand_in.url).wait_for_release(RUN, "s2", timeout=10) == mine
    assert [s.target for s in stand_in.seen] == [
        f"/v1/runs/{RUN}/releases?after=0&wait=10",
        f"/v1/runs/{RUN}/releases?after=1&wait=10",
    ]


def test_answers_the_decision_when_the_run_is_decided_before_the_release(stand_in: StandIn) -> None:
    decided = decision()
    stand_in.script = [releases_answer("approved"), lambda seen: (200, {}, decided)]
    assert client(stand_in.url).wait_for_release(RUN, "s1", timeout=10) == decided
    assert stand_in.seen[1].target == f"/v1/runs/{RUN}/decision?wait=0"


def test_gives_up_naming_the_step(stand_in: StandIn) -> None:
    stand_in.script = [releases_answer("pending")] * 20
    with pytest.raises(DecisionTimeout, match="release of step s2"):
        client(stand_in.url).wait_for_release(RUN, "s2", timeout=0.2)


def test_reads_the_releases_as_sent(stand_in: StandIn) -> None:
    mine = release_of("s1")
    stand_in.script = [releases_answer("pending", mine)]
    assert client(stand_in.url).get_releases(RUN) == {"runId": RUN, "status": "pending", "releases": [mine]}
    assert stand_in.seen[0].target == f"/v1/runs/{RUN}/releases?after=0&wait=0"
    assert stand_in.seen[0].signed_correctly


def test_the_published_release_vector_releases_its_step_once_its_dependency_is_applied(stand_in: StandIn) -> None:
    (vector,) = [case for case in read_vectors("receipts.json")["valid"] if case["decision"].get("kind") == "release"]
    release = {**vector["decision"], "receipt": vector["receipt"]}
    agent = Client(stand_in.url, AGENT, SECRET, public_keys=vector["jwks"], clock=lambda: NOW, attempts=1)
    step = next(s for s in release["plan"]["steps"] if s["id"] == release["stepId"])
    stand_in.script = [status_with([]), status_with(["s1"])]
    with pytest.raises(VerificationError, match="depends on s1"):
        agent.verify_step(release, step)
    assert agent.verify_step(release, step).step["id"] == "s2"
    assert stand_in.seen[0].target == f"/v1/runs/{release['runId']}"
