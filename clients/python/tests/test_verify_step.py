"""verify_step's checks after a valid receipt, each with the TypeScript client's reason, on decisions
Countersign's key really signed (a key pinned for the test, so nothing is fetched)."""

from __future__ import annotations

import copy

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from test_transport import AGENT, PLAN, SECRET, jwks_of, signed_decision

from countersign import Client, VerificationError

KEY = Ed25519PrivateKey.generate()
CLIENT = Client("http://127.0.0.1:9", AGENT, SECRET, public_keys=jwks_of(KEY), clock=lambda: 1_775_124_000.0)
STEP = PLAN["steps"][0]


def signed_plan(**changes: object) -> dict:
    plan = copy.deepcopy(signed_decision(KEY)["plan"])
    plan.update(changes)
    return plan


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"status": "rejected", "plan": None, "reason": "not today"}, "not_approved"),
        ({"agent": "billing"}, "not_approved"),
        ({"plan": signed_plan(expiresAt="2026-04-02T09:59:59Z")}, "expired"),
        ({"plan": signed_plan(digest="0" * 64)}, "plan_mismatch"),
        ({"plan": signed_plan(agent="billing")}, "plan_mismatch"),
    ],
    ids=["rejected", "another agent's", "expired", "plan digest", "plan of another agent"],
)
def test_refuses_a_genuine_decision_that_does_not_approve_the_step(changes: dict, reason: str) -> None:
    with pytest.raises(VerificationError) as refused:
        CLIENT.verify_step(signed_decision(KEY, **changes), STEP)
    assert refused.value.reason == reason


def test_passes_the_approved_step_and_says_who_wrote_it() -> None:
    verified = CLIENT.verify_step(signed_decision(KEY), copy.deepcopy(STEP))
    assert verified.step["digest"] == signed_decision(KEY)["plan"]["steps"][0]["digest"]
    assert verified.provenance == {"by": "agent", "userId": None, "version": 1, "change": None}


def test_a_receipt_by_a_key_not_pinned_is_a_bad_receipt_without_fetching() -> None:
    with pytest.raises(VerificationError) as refused:
        CLIENT.verify_step(signed_decision(Ed25519PrivateKey.generate()), STEP)
    assert refused.value.reason == "bad_receipt"
    assert "is not one of the keys" in refused.value.message
