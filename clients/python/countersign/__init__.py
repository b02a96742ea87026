"""Countersign's Python client: submit AI-agent plans for approval in Slack, wait for the decision,
verify each step against Countersign's signed receipt right before running it, report outcomes.

See docs/python-client.md; the wire protocol is docs/http-api.md.
"""

from .canonical import CanonicalJsonError, canonical_json, loads, plan_digest, sha256_hex, step_digest
from .client import Client, Outcome, Submitted, VerifiedStep, new_run_id
from .errors import (
    AlreadyClaimed,
    AuthError,
    BadResponse,
    Conflict,
    CountersignError,
    DecisionTimeout,
    InvalidPlan,
    InvalidRequest,
    NotApproved,
    NotFound,
    RateLimited,
    RequestError,
    Unavailable,
    VerificationError,
    WorldChanged,
)
from .receipts import ReceiptCheck, jwk_thumbprint, keys_from_jwks, verify_receipt
from .signing import signature, signed_headers, signing_text
from .wire import (
    Decision,
    DecisionPlan,
    DecisionStep,
    Diagnostic,
    PlanStep,
    Precondition,
    Provenance,
    Receipt,
    Release,
    ReleasedStep,
)
from .world import ReadVersion, check_preconditions, check_world

__version__ = "0.1.0"

__all__ = [
    "AlreadyClaimed",
    "AuthError",
    "BadResponse",
    "CanonicalJsonError",
    "Client",
    "Conflict",
    "CountersignError",
    "Decision",
    "DecisionPlan",
    "DecisionStep",
    "DecisionTimeout",
    "Diagnostic",
    "InvalidPlan",
    "InvalidRequest",
    "NotApproved",
    "NotFound",
    "Outcome",
    "PlanStep",
    "Precondition",
    "Provenance",
    "RateLimited",
    "ReadVersion",
    "Receipt",
    "ReceiptCheck",
    "Release",
    "ReleasedStep",
    "RequestError",
    "Submitted",
    "Unavailable",
    "VerificationError",
    "VerifiedStep",
    "WorldChanged",
    "canonical_json",
    "check_preconditions",
    "check_world",
    "jwk_thumbprint",
    "keys_from_jwks",
    "loads",
    "new_run_id",
    "plan_digest",
    "sha256_hex",
    "signature",
    "signed_headers",
    "signing_text",
    "step_digest",
    "verify_receipt",
]
