"""Decision receipts (docs/receipts.md): Countersign's Ed25519 signature over the canonical JSON of
a decision without its ``receipt`` field, checked with the public keys of its JWKS."""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from .canonical import CanonicalJsonError, canonical_json

__all__ = ["ReceiptCheck", "ReceiptKeys", "jwk_thumbprint", "keys_from_jwks", "verify_receipt"]

ReceiptKeys = Mapping[str, Ed25519PublicKey]
"""Public keys that verify receipts, by kid."""

_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")
_SIGNATURE_BYTES = 64
_PUBLIC_KEY_BYTES = 32


@dataclass(frozen=True)
class ReceiptCheck:
    """Whether a receipt verifies: ``ok``; else ``reason`` (``malformed_receipt``, ``unknown_kid``,
    ``not_canonical`` or ``bad_signature``) and a ``message`` for people."""

    ok: bool
    reason: str | None = None
    message: str = ""
    kid: str | None = None


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: object, size: int) -> bytes | None:
    """Exactly ``size`` bytes of unpadded base64url, in the one spelling that re-encodes identically."""
    if not isinstance(text, str) or not _BASE64URL.fullmatch(text):
        return None
    try:
        data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return data if len(data) == size and _b64url(data) == text else None


def jwk_thumbprint(x: str) -> str:
    """The RFC 7638 thumbprint of an Ed25519 JWK with public key ``x``: Countersign's kid."""
    members = canonical_json({"crv": "Ed25519", "kty": "OKP", "x": x})
    return _b64url(hashlib.sha256(members.encode("utf-8")).digest())


def keys_from_jwks(jwks: Any) -> dict[str, Ed25519PublicKey]:
    """The Ed25519 keys of a JWKS (``GET /.well-known/jwks.json``), by kid.

    Keys that are not OKP/Ed25519 are ignored. An Ed25519 key whose kid is not its thumbprint, that
    carries a private part (``d``), or that is not for EdDSA signatures refuses the whole set, as
    does a set without any Ed25519 key: raises ``ValueError`` saying which.
    """
    if not isinstance(jwks, Mapping) or not isinstance(jwks.get("keys"), list):
        raise ValueError("not a JWKS: expected an object { keys: [...] }")
    keys: dict[str, Ed25519PublicKey] = {}
    for index, jwk in enumerate(jwks["keys"]):
        if not isinstance(jwk, Mapping):
            raise ValueError(f"keys[{index}]: must be a JWK object")
        if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            continue  # other keys serve other purposes
        raw = _b64url_decode(jwk.get("x"), _PUBLIC_KEY_BYTES)
        if raw is None:
            raise ValueError(f"keys[{index}].x: must be 43 characters of unpadded base64url (a 32-byte key)")
        if not isinstance(jwk.get("kid"), str):
            raise ValueError(f"keys[{index}].kid: is missing: Countersign identifies keys by kid")
        if jwk.get("alg", "EdDSA") != "EdDSA":
            raise ValueError(f'keys[{index}].alg: must be "EdDSA" when present')
        if jwk.get("use", "sig") != "sig":
            raise ValueError(f'keys[{index}].use: must be "sig" when present')
        if "d" in jwk:
            raise ValueError(f"keys[{index}].d: is a private key: publish public keys only")
        expected = jwk_thumbprint(jwk["x"])
        if jwk["kid"] != expected:
            raise ValueError(
                f"keys[{index}].kid: {jwk['kid']!r} is not the key's RFC 7638 thumbprint ({expected})"
            )
        keys[expected] = Ed25519PublicKey.from_public_bytes(raw)
    if not keys:
        raise ValueError("the JWKS has no Ed25519 (OKP) keys")
    return keys


def _malformed(receipt: Any) -> str | None:
    """Why ``receipt`` is not ``{alg: "EdDSA", kid, signature}``, or None when it is."""
    if isinstance(receipt, str) and re.fullmatch(r"[0-9a-f]{64}", receipt):
        return (
            "the receipt is a hex string, the HMAC receipt of earlier versions: decisions are now "
            "signed with Ed25519 (receipt: { alg, kid, signature })"
        )
    if not isinstance(receipt, Mapping):
        return f"the receipt must be an object {{ alg, kid, signature }}, not {type(receipt).__name__}"
    unknown = sorted(set(receipt) - {"alg", "kid", "signature"})
    if receipt.get("alg") != "EdDSA":
        return f'receipt.alg: must be "EdDSA", not {receipt.get("alg")!r}'
    if not isinstance(receipt.get("kid"), str) or receipt["kid"] == "":
        return "receipt.kid: must be a non-empty string"
    if _b64url_decode(receipt.get("signature"), _SIGNATURE_BYTES) is None:
        return "receipt.signature: must be 86 characters of unpadded base64url (a 64-byte Ed25519 signature)"
    if unknown:
        return f"receipt: has unknown fields: {', '.join(unknown)}"
    return None


def verify_receipt(decision: Mapping[str, Any], keys: ReceiptKeys) -> ReceiptCheck:
    """Whether ``decision["receipt"]`` is Countersign's signature, by one of ``keys``, over exactly
    the rest of the decision (every other field, including any a newer server adds)."""
    receipt = decision.get("receipt")
    problem = _malformed(receipt)
    if problem is not None:
        return ReceiptCheck(False, "malformed_receipt", problem)
    assert isinstance(receipt, Mapping)
    kid = receipt["kid"]
    key = keys.get(kid)
    if key is None:
        listed = ", ".join(keys) or "none"
        shown = kid if len(kid) <= 64 else kid[:64] + "…"
        return ReceiptCheck(
            False,
            "unknown_kid",
            f"receipt.kid {shown!r} is not one of the keys in the JWKS ({listed}): the decision was "
            "signed by another key, or the JWKS is out of date",
        )
    unsigned = {name: value for name, value in decision.items() if name != "receipt"}
    try:
        text = canonical_json(unsigned)
    except CanonicalJsonError as error:
        return ReceiptCheck(
            False,
            "not_canonical",
            f"the decision is not canonical JSON ({error}), so it is not what Countersign signed",
        )
    signature = _b64url_decode(receipt["signature"], _SIGNATURE_BYTES)
    assert signature is not None
    try:
        key.verify(signature, text.encode("utf-8"))
    except InvalidSignature:
        return ReceiptCheck(
            False,
            "bad_signature",
            f"the receipt signature does not verify with key {kid}: the decision was changed after "
            "it was signed, or another key signed it",
        )
    return ReceiptCheck(True, kid=kid)
