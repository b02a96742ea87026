"""Receipts against test/vectors/receipts.json (docs/receipts.md), and request signing against the
worked example of docs/http-api.md."""

from __future__ import annotations

import pytest
from conftest import read_vectors

from countersign import canonical_json, jwk_thumbprint, keys_from_jwks, signature, verify_receipt

VECTORS = read_vectors("receipts.json")


@pytest.mark.parametrize("case", VECTORS["valid"], ids=[c["name"] for c in VECTORS["valid"]])
def test_verifies_each_valid_receipt(case: dict) -> None:
    assert canonical_json(case["decision"]) == case["canonical"]
    check = verify_receipt({**case["decision"], "receipt": case["receipt"]}, keys_from_jwks(case["jwks"]))
    assert check.ok, check.message
    assert check.kid == case["receipt"]["kid"]


@pytest.mark.parametrize("case", VECTORS["invalid"], ids=[c["name"] for c in VECTORS["invalid"]])
def test_refuses_each_invalid_receipt_with_its_reason(case: dict) -> None:
    check = verify_receipt({**case["decision"], "receipt": case["receipt"]}, keys_from_jwks(case["jwks"]))
    assert not check.ok
    assert check.reason == case["reason"]


def test_the_kid_is_the_rfc_7638_thumbprint_of_each_vector_key() -> None:
    for pair in VECTORS["keys"].values():
        assert jwk_thumbprint(pair["jwk"]["x"]) == pair["jwk"]["kid"]


def test_refuses_a_jwks_whose_kid_is_not_the_thumbprint_or_that_holds_a_private_key() -> None:
    jwk = VECTORS["keys"]["current"]["jwk"]
    with pytest.raises(ValueError, match="thumbprint"):
        keys_from_jwks({"keys": [{**jwk, "kid": VECTORS["keys"]["previous"]["jwk"]["kid"]}]})
    with pytest.raises(ValueError, match="private"):
        keys_from_jwks({"keys": [{**jwk, "d": "AAAA"}]})
    with pytest.raises(ValueError, match="no Ed25519"):
        keys_from_jwks({"keys": [{"kty": "RSA", "n": "x", "e": "AQAB", "kid": "r"}]})


@pytest.mark.parametrize(
    ("method", "path", "body", "expected"),
    [
        ("POST", "/v1/runs/019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77/steps/s2/outcome", b'{"status":"applying"}',
         "v1=5eecbcc99ba89ba0ce70f6d6dafe0392004a5d1e8dd4b93f2ba36ac3200de802"),
        ("GET", "/v1/runs/019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77/decision?wait=30", b"",
         "v1=4a17744423d235874c6c3a79b007bd3a83c64abc2b08bdb3bc2862eb22423cd7"),
    ],
)
def test_signs_the_worked_examples_of_the_http_api(method: str, path: str, body: bytes, expected: str) -> None:
    assert signature("example-secret-do-not-use", "1775124000", method, path, body) == expected
