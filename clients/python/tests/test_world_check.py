"""Preconditions at apply (issue 19): ``verify_step`` answers the target versions the approvers saw,
and with ``read_version`` refuses a step whose target moved since approval (``WorldChanged``).

The decision is the published vector with preconditions (test/vectors/receipts.json), signed with the
RFC 8037 test key: Countersign's pipeline binds the same field from the tools' previews (issue 19,
lane A); once it does, the end-to-end run in test_e2e.py can check a real decision the same way."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

import pytest
from conftest import read_vectors

from countersign import Client, VerificationError, WorldChanged, check_preconditions, check_world

(VECTOR,) = [case for case in read_vectors("receipts.json")["valid"] if '"preconditions":' in case["canonical"]]
DECISION = {**VECTOR["decision"], "receipt": VECTOR["receipt"]}
NOW = datetime(2026, 4, 2, 15, 0, tzinfo=timezone.utc).timestamp()
CLIENT = Client("http://127.0.0.1:9", "freight-ops", "secret", public_keys=VECTOR["jwks"], clock=lambda: NOW)


def step(step_id: str) -> dict:
    return copy.deepcopy(next(s for s in DECISION["plan"]["steps"] if s["id"] == step_id))


# The freight system as the executor reads it now: type, id → version.
WORLD = {("delivery", "dl_55120"): "7", ("invoice", "in_74120"): "2026-04-01T09:14:07.412Z"}


def test_answers_the_preconditions_of_each_step_and_an_empty_list_without_any() -> None:
    assert CLIENT.verify_step(DECISION, step("s2")).preconditions == [
        {"type": "delivery", "id": "dl_55120", "version": "7"}
    ]
    assert CLIENT.verify_step(DECISION, step("s1")).preconditions == []


def test_runs_a_step_whose_target_is_still_at_the_approved_version() -> None:
    verified = CLIENT.verify_step(DECISION, step("s3"), read_version=lambda kind, entity_id: WORLD[(kind, entity_id)])
    assert verified.step["id"] == "s3"


def test_refuses_a_step_whose_target_moved_between_approval_and_apply() -> None:
    moved = {**WORLD, ("delivery", "dl_55120"): "8"}  # a dispatcher changed the delivery
    with pytest.raises(WorldChanged) as refused:
        CLIENT.verify_step(DECISION, step("s2"), read_version=lambda kind, entity_id: moved[(kind, entity_id)])
    assert isinstance(refused.value, VerificationError)
    assert refused.value.reason == "world_changed"
    assert refused.value.entity == {"type": "delivery", "id": "dl_55120"}
    assert (refused.value.approved_version, refused.value.current_version) == ("7", "8")
    assert refused.value.message == (
        "delivery dl_55120 changed since it was approved (version 7 → 8): preview again and ask for approval "
        "again; do not apply"
    )


def test_fails_closed_when_the_target_is_gone_or_cannot_be_read() -> None:
    with pytest.raises(WorldChanged, match="could not be read now") as gone:
        CLIENT.verify_step(DECISION, step("s2"), read_version=lambda kind, entity_id: None)
    assert gone.value.current_version is None

    def unreachable(kind: str, entity_id: str) -> str:
        raise ConnectionError("the freight API answered 503")

    with pytest.raises(WorldChanged) as unread:
        CLIENT.verify_step(DECISION, step("s2"), read_version=unreachable)
    assert unread.value.message == (
        "the current version of delivery dl_55120 could not be read (the freight API answered 503), so nobody "
        "can say it is still as approved (version 7): do not apply; try again, or preview again and ask for "
        "approval again"
    )


def test_reads_nothing_for_a_step_without_preconditions_nor_for_one_that_fails_another_check() -> None:
    reads: list[tuple[str, str]] = []

    def read(kind: str, entity_id: str) -> str:
        reads.append((kind, entity_id))
        return WORLD[(kind, entity_id)]

    CLIENT.verify_step(DECISION, step("s1"), read_version=read)
    with pytest.raises(VerificationError) as refused:
        CLIENT.verify_step(DECISION, {**step("s2"), "args": {"delivery_id": "dl_55120", "window": "2026-04-09"}},
                           read_version=read)
    assert refused.value.reason == "digest_mismatch"
    assert reads == []


def test_check_world_and_check_preconditions_on_their_own() -> None:
    preconditions = CLIENT.verify_step(DECISION, step("s2")).preconditions
    check_world(preconditions, lambda kind, entity_id: "7")
    with pytest.raises(WorldChanged, match=r"version 7 → 07"):
        check_world(iter(preconditions), lambda kind, entity_id: "07")  # opaque strings: "07" is not "7"
    assert check_preconditions(preconditions, lambda kind, entity_id: "7") is None
    assert check_preconditions([], lambda kind, entity_id: None) is None
    moved = check_preconditions(preconditions, lambda kind, entity_id: 7)  # not a string: not a version
    assert moved is not None and moved.current_version is None
