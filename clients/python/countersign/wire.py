"""The shapes of Countersign's answers (docs/http-api.md), as ``TypedDict``s over the wire JSON.

Decisions are kept exactly as the server sent them, field names included: the receipt covers every
field, so a decision must reach ``verify_step`` unchanged (fields a newer server adds included).
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict

__all__ = [
    "Decision",
    "DecisionPlan",
    "DecisionStep",
    "Diagnostic",
    "PlanStep",
    "Precondition",
    "Provenance",
    "Receipt",
    "Release",
    "ReleasedStep",
]


class Diagnostic(TypedDict):
    """One problem validation found: ``{"phase", "code", "stepId"?, "path"?, "message"}``."""

    phase: str
    code: str
    stepId: NotRequired[str]
    path: NotRequired[list[str | int]]
    message: str


class Provenance(TypedDict):
    """Who wrote a step as decided: the agent, or a person who added or changed it in an edit."""

    by: Literal["agent", "user"]
    userId: str | None
    version: int
    change: Literal["added", "changed"] | None


class PlanStep(TypedDict):
    """A step to submit: ``id`` is optional (the server assigns ``s1``, ``s2``, …)."""

    id: NotRequired[str]
    tool: str
    args: dict[str, Any]
    dependsOn: NotRequired[list[str]]


class Precondition(TypedDict):
    """A step's target as the approvers saw it: check it right before the effect (``check_world``)."""

    type: str
    id: str
    version: str


class DecisionStep(TypedDict):
    """A step as approved: run ``tool`` with ``args`` only after ``verify_step`` passes."""

    id: str
    tool: str
    args: dict[str, Any]
    digest: str
    route: Literal["auto", "review", "block"]
    approvals: list[dict[str, str]]
    provenance: Provenance
    dependsOn: NotRequired[list[str]]
    preconditions: NotRequired[list[Precondition]]


class DecisionPlan(TypedDict):
    """The plan version decided on; run it, not what you submitted (people may have edited it)."""

    runId: str
    agent: str
    expiresAt: str
    digest: str
    steps: list[DecisionStep]


class Receipt(TypedDict):
    """Countersign's Ed25519 signature over the rest of the decision (docs/receipts.md)."""

    alg: Literal["EdDSA"]
    kid: str
    signature: str


class Decision(TypedDict):
    """What Countersign decided about a run: approved, rejected, expired or invalid."""

    runId: str
    agent: str
    status: Literal["approved", "rejected", "expired", "invalid"]
    version: int | None
    plan: DecisionPlan | None
    decidedAt: str
    decidedBy: str | None
    reason: str | None
    phase: str | None
    diagnostics: list[Diagnostic]
    configDigest: str
    released: NotRequired[list[ReleasedStep]]
    receipt: Receipt


class ReleasedStep(TypedDict):
    """A step released before the run was decided, as the decision lists it."""

    stepId: str
    releasedAt: str
    outcome: Literal["applying", "applied", "failed"] | None


class Release(TypedDict):
    """One step released before its plan is decided, signed like a decision (docs/receipts.md):
    it lets ``stepId`` run, and no other step."""

    kind: Literal["release"]
    runId: str
    agent: str
    version: int
    plan: DecisionPlan
    stepId: str
    releasedAt: str
    configDigest: str
    receipt: Receipt
