"""Canonical JSON and digests against test/vectors/canonical-json.json (docs/canonical-json.md)."""

from __future__ import annotations

import pytest
from conftest import read_vectors

from countersign import CanonicalJsonError, canonical_json, loads, plan_digest, sha256_hex, step_digest

CASES = read_vectors("canonical-json.json")["cases"]


def canonical_of(case: dict) -> str:
    source = case["input"]
    if case["kind"] == "value":
        return canonical_json(source)
    if case["kind"] == "step":
        return canonical_json({"args": source["args"], **dependencies(source), "tool": source["tool"]})
    return canonical_json(
        {
            "agent": source["agent"],
            "expires_at": source["expiresAt"],
            "run_id": source["runId"],
            "steps": [
                {"args": s["args"], **dependencies(s), "id": s["id"], "tool": s["tool"]} for s in source["steps"]
            ],
        }
    )


def dependencies(step: dict) -> dict:
    """Contract 2: depends_on, sorted and unique, only when the step has dependencies."""
    given = step.get("dependsOn") or []
    return {"depends_on": sorted(set(given))} if given else {}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_reproduces_the_canonical_text_and_digest_of_each_vector(case: dict) -> None:
    assert canonical_of(case) == case["canonical"]
    digest = {"value": lambda: sha256_hex(canonical_json(case["input"])),
              "step": lambda: step_digest(case["input"]),
              "plan": lambda: plan_digest(case["input"])}[case["kind"]]()
    assert digest == case["sha256"]


def test_the_vectors_cover_every_kind() -> None:
    assert {c["kind"] for c in CASES} == {"value", "step", "plan"}


@pytest.mark.parametrize(
    ("value", "code"),
    [(2.5, "non_integer_number"), (1.0, "non_integer_number"), (-0.0, "negative_zero"),
     (2**53, "unsafe_integer"), (-(2**53), "unsafe_integer"), (float("nan"), "non_integer_number"),
     ({1: "x"}, "not_json"), (b"bytes", "not_json")],
)
def test_refuses_what_has_no_canonical_form(value: object, code: str) -> None:
    with pytest.raises(CanonicalJsonError) as raised:
        canonical_json({"args": {"amount": value}})
    assert raised.value.code == code
    assert raised.value.path == ["args", "amount"]


def test_reads_numbers_as_json_parse_does() -> None:
    assert loads('{"a":1.0,"b":1e3,"c":-0,"d":2.5}') == {"a": 1, "b": 1000, "c": -0.0, "d": 2.5}
    assert canonical_json(loads('{"a":1.0,"b":1e3}')) == '{"a":1,"b":1000}'
    with pytest.raises(CanonicalJsonError, match="negative_zero"):
        canonical_json(loads('{"c":-0}'))
    with pytest.raises(ValueError):
        loads('{"n":NaN}')


def test_a_lone_surrogate_read_from_json_is_written_escaped() -> None:
    assert canonical_json(loads('"\\ud800x"')) == '"\\ud800x"'
