"""End to end: a Python agent against a real Countersign and the Slack stand-in (started by the
``npm run local-stack``; see conftest.py)."""

from __future__ import annotations

import base64
import copy
import sys
import time

import pytest
from conftest import REPO, Countersign
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from countersign import (
    AlreadyClaimed,
    AuthError,
    Client,
    Conflict,
    CountersignError,
    Decision,
    DecisionTimeout,
    InvalidPlan,
    NotApproved,
    NotFound,
    VerificationError,
    canonical_json,
    new_run_id,
)

sys.path.insert(0, str(REPO / "examples" / "freight"))
from agent import FREIGHT_PLAN  # noqa: E402 - the example's plan, the twin of plans.ts


@pytest.fixture(scope="module")
def client(countersign: Countersign) -> Client:
    return Client(countersign.url, countersign.agent, countersign.secret)


def freight_plan(**overrides: object) -> dict:
    return {**copy.deepcopy(FREIGHT_PLAN), "runId": new_run_id(), **overrides}


@pytest.fixture(scope="module")
def approved(countersign: Countersign, client: Client) -> Decision:
    """The freight plan, submitted by the Python agent and approved by an operator in the stand-in."""
    submitted = client.submit(freight_plan())
    assert submitted.status == "pending"
    assert countersign.approve(submitted.run_id)["status"] == 200
    return client.wait_for_decision(submitted.run_id, timeout=30)


def forge(decision: Decision, **changes: object) -> Decision:
    """The decision, changed, and signed with a key Countersign never had under its published kid."""
    unsigned = {k: v for k, v in copy.deepcopy(decision).items() if k != "receipt"}
    unsigned.update(changes)
    signature = Ed25519PrivateKey.generate().sign(canonical_json(unsigned).encode("utf-8"))
    encoded = base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    return {**unsigned, "receipt": {**decision["receipt"], "signature": encoded}}  # type: ignore[typeddict-item]


def test_an_approved_freight_plan_is_verified_step_by_step_and_its_outcomes_reported(
    client: Client, approved: Decision
) -> None:
    assert approved["status"] == "approved"
    assert approved["decidedBy"] == "U0OP1"
    plan = approved["plan"]
    assert plan is not None
    assert [s["id"] for s in plan["steps"]] == ["s1", "s2", "s3"]
    for step in plan["steps"]:
        verified = client.verify_step(approved, step)
        assert verified.provenance["by"] == "agent"
        claim = client.report_outcome(approved["runId"], step["id"], "applying")
        assert (claim.step_id, claim.status) == (step["id"], "applying")
        done = client.report_outcome(approved["runId"], step["id"], "applied")
        assert done.status == "applied"
    run = client.get_run(approved["runId"])
    assert run["status"] == "approved"


def test_a_step_waits_for_the_step_it_depends_on_to_be_reported_applied(
    countersign: Countersign, client: Client
) -> None:
    plan = freight_plan()
    plan["steps"][2]["dependsOn"] = ["s2"]  # the reply to the customer needs the rebooking done
    submitted = client.submit(plan)
    assert countersign.approve(submitted.run_id)["status"] == 200
    decision = client.wait_for_release(submitted.run_id, "s3", timeout=30)
    assert decision["status"] == "approved"  # nothing was released early: the decision covers it
    assert client.get_releases(submitted.run_id) == {"runId": submitted.run_id, "status": "approved", "releases": []}
    s2, s3 = decision["plan"]["steps"][1:]  # type: ignore[index]
    assert s3["dependsOn"] == ["s2"]
    for report in (None, "applying"):
        if report is not None:
            client.report_outcome(submitted.run_id, "s2", report)
        with pytest.raises(VerificationError) as refused:
            client.verify_step(decision, s3)
        assert refused.value.reason == "dependency_not_applied"
        assert "s2" in refused.value.message
    client.verify_step(decision, s2)
    client.report_outcome(submitted.run_id, "s2", "applied")
    assert client.verify_step(decision, s3).step["id"] == "s3"
    assert client.get_run(submitted.run_id)["applied"] == ["s2"]


def test_named_numbers_go_with_an_outcome_and_bad_ones_are_named_before_sending(
    countersign: Countersign, client: Client
) -> None:
    submitted = client.submit(freight_plan())
    assert countersign.approve(submitted.run_id)["status"] == 200
    client.wait_for_decision(submitted.run_id, timeout=30)
    for metrics, says in (({"refund": 14.5}, "whole number"), ({"Refund Cents": 1}, "metric name")):
        with pytest.raises(CountersignError) as refused:
            client.report_outcome(submitted.run_id, "s2", "applied", metrics=metrics)
        assert says in str(refused.value)
    done = client.report_outcome(submitted.run_id, "s2", "applied", metrics={"refund_cents": 148_900})
    assert done.metrics == {"refund_cents": 148_900}


def test_a_step_claimed_before_is_refused_so_it_never_runs_twice(client: Client, approved: Decision) -> None:
    with pytest.raises(AlreadyClaimed) as refused:
        client.report_outcome(approved["runId"], "s1", "applying")
    assert refused.value.code == "already_claimed"
    assert refused.value.after_lost_answer is False


def test_a_tampered_step_is_refused_with_digest_mismatch(client: Client, approved: Decision) -> None:
    step = copy.deepcopy(approved["plan"]["steps"][1])  # type: ignore[index]
    step["args"]["window"] = "2026-04-30"
    with pytest.raises(VerificationError) as refused:
        client.verify_step(approved, step)
    assert refused.value.reason == "digest_mismatch"
    other_tool = {**approved["plan"]["steps"][0], "tool": "send_reply"}  # type: ignore[index]
    with pytest.raises(VerificationError, match="digest_mismatch"):
        client.verify_step(approved, other_tool)


def test_a_step_that_was_never_approved_is_refused_with_unknown_step(client: Client, approved: Decision) -> None:
    extra = {"id": "s9", "tool": "issue_refund", "args": {"invoice_id": "in_74119", "amount": 148900}}
    with pytest.raises(VerificationError) as refused:
        client.verify_step(approved, extra)
    assert refused.value.reason == "unknown_step"


def test_a_forged_receipt_is_refused_with_bad_receipt(client: Client, approved: Decision) -> None:
    step = approved["plan"]["steps"][1]  # type: ignore[index]
    with pytest.raises(VerificationError) as refused:
        client.verify_step(forge(approved), step)
    assert refused.value.reason == "bad_receipt"
    assert "does not verify" in refused.value.message
    # A plan rewritten wholesale, digests and all, and re-signed: still not Countersign's signature.
    rewritten = copy.deepcopy(approved["plan"])
    assert rewritten is not None
    rewritten["steps"][1]["args"]["window"] = "2026-04-30"
    with pytest.raises(VerificationError, match="bad_receipt"):
        client.verify_step(forge(approved, plan=rewritten), rewritten["steps"][1])


def test_an_altered_decision_under_the_real_receipt_is_refused(client: Client, approved: Decision) -> None:
    altered = copy.deepcopy(approved)
    altered["decidedBy"] = "U0LEAD1"
    with pytest.raises(VerificationError, match="bad_receipt"):
        client.verify_step(altered, approved["plan"]["steps"][0])  # type: ignore[index]


def test_an_expired_approval_is_refused(client: Client, approved: Decision) -> None:
    step = approved["plan"]["steps"][0]  # type: ignore[index]
    with pytest.raises(VerificationError) as refused:
        client.verify_step(approved, step, now=time.time() + 3 * 3600)
    assert refused.value.reason == "expired"


def test_a_decision_for_another_agent_approves_nothing_here(countersign: Countersign, approved: Decision) -> None:
    billing = Client(countersign.url, "billing", "another-secret")
    with pytest.raises(VerificationError) as refused:
        billing.verify_step(approved, approved["plan"]["steps"][0])  # type: ignore[index]
    assert refused.value.reason == "not_approved"


def test_a_plan_approved_by_policy_is_decided_at_once(client: Client) -> None:
    plan = freight_plan(steps=[FREIGHT_PLAN["steps"][0]])
    submitted = client.submit(plan)
    assert submitted.status == "approved"
    decision = client.get_decision(submitted.run_id)
    assert decision is not None and decision["decidedBy"] == "policy"
    client.verify_step(decision, decision["plan"]["steps"][0])  # type: ignore[index]


def test_an_invalid_plan_raises_invalid_plan_with_the_servers_phase_and_diagnostics(client: Client) -> None:
    unknown_tool = freight_plan(steps=[{"id": "s1", "tool": "wire_money", "args": {}}])
    with pytest.raises(InvalidPlan) as refused:
        client.submit(unknown_tool)
    assert (refused.value.checked_by, refused.value.phase) == ("server", "resolve")
    assert refused.value.diagnostics[0]["code"] == "unknown_tool"
    bad_date = freight_plan(steps=[{"id": "s2", "tool": "reschedule_delivery",
                                     "args": {"delivery_id": "dl_55120", "window": "Friday"}}])
    with pytest.raises(InvalidPlan) as refused:
        client.submit(bad_date)
    assert refused.value.phase == "type"
    assert refused.value.diagnostics[0]["stepId"] == "s2"
    assert refused.value.diagnostics[0]["path"] == ["window"]


def test_if_blocked_refuse_has_a_blocked_step_refused_at_authorize_naming_the_step(countersign: Countersign) -> None:
    gateway = Client(countersign.url, countersign.gateway_agent, countersign.gateway_secret)
    drop_all = {"id": "s1", "tool": "mcp_call",
                "args": {"tool": "drop_all", "arguments": "{}", "annotations": {"destructiveHint": True}}}
    with pytest.raises(InvalidPlan) as refused:
        gateway.submit({"steps": [drop_all], "expiresIn": "5m"}, if_blocked="refuse")
    assert (refused.value.checked_by, refused.value.phase) == ("server", "authorize")
    (blocked,) = refused.value.diagnostics
    assert (blocked["code"], blocked["stepId"]) == ("blocked", "s1")
    assert "never through an agent" in blocked["message"]
    assert (gateway.get_decision(refused.value.run_id) or {}).get("status") == "invalid"  # type: ignore[arg-type]
    # The default posts it for people to see; it stays pending (it can never be approved).
    assert gateway.submit({"steps": [drop_all], "expiresIn": "5m"}).status == "pending"
    with pytest.raises(InvalidPlan) as local:
        gateway.submit({"steps": [drop_all]}, if_blocked="skip")
    assert (local.value.checked_by, local.value.diagnostics[0]["path"]) == ("client", ["ifBlocked"])


def test_a_plan_with_a_fraction_is_refused_before_it_is_sent(client: Client) -> None:
    refund = {"id": "s1", "tool": "issue_refund", "args": {"invoice_id": "in_74119", "amount": 1489.0}}
    with pytest.raises(InvalidPlan) as refused:
        client.submit(freight_plan(steps=[refund]))
    assert refused.value.checked_by == "client"
    assert refused.value.diagnostics[0]["code"] == "non_integer_number"


def test_another_plan_under_a_used_run_id_is_a_conflict_and_the_same_plan_answers_again(client: Client) -> None:
    plan = freight_plan()
    first = client.submit(plan)
    assert client.submit(plan) == first
    with pytest.raises(Conflict) as refused:
        client.submit({**plan, "summary": "something else"})
    assert refused.value.code == "run_exists" and refused.value.status == 409


def test_waiting_gives_up_with_decision_timeout_while_the_run_stays_open(client: Client) -> None:
    submitted = client.submit(freight_plan())
    with pytest.raises(DecisionTimeout):
        client.wait_for_decision(submitted.run_id, timeout=1.5)
    assert client.get_run(submitted.run_id)["status"] == "pending"
    with pytest.raises(NotApproved):
        client.report_outcome(submitted.run_id, "s2", "applying")


def test_outcomes_for_unknown_runs_and_steps_are_not_found(client: Client, approved: Decision) -> None:
    with pytest.raises(NotFound) as unknown_step:
        client.report_outcome(approved["runId"], "s9", "applying")
    assert unknown_step.value.code == "unknown_step"
    with pytest.raises(NotFound) as unknown_run:
        client.report_outcome("no-such-run", "s1", "applying")
    assert unknown_run.value.code == "not_found"


def test_a_wrong_secret_is_an_auth_error(countersign: Countersign) -> None:
    impostor = Client(countersign.url, countersign.agent, "not-the-secret")
    with pytest.raises(AuthError) as refused:
        impostor.submit(freight_plan())
    assert refused.value.status == 401 and refused.value.code == "unauthorized"
