"""The client's exceptions: one class per concept, each with a string ``code`` to switch on.

Every exception the client raises on purpose is a ``CountersignError``. Refusals from the server
carry its diagnostics: ``InvalidPlan`` the phase and diagnostics of a refused plan, ``RequestError``
and its subclasses the HTTP status, the server's error ``code`` and ``message``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "AlreadyClaimed",
    "AuthError",
    "BadResponse",
    "Conflict",
    "CountersignError",
    "DecisionTimeout",
    "InvalidPlan",
    "InvalidRequest",
    "NotApproved",
    "NotFound",
    "RateLimited",
    "RequestError",
    "Unavailable",
    "VerificationError",
    "WorldChanged",
]


class CountersignError(Exception):
    """Base of every error the client raises on purpose; ``code`` is a string to switch on."""

    code: str = "invalid_argument"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidPlan(CountersignError):
    """The plan was refused — by the client's local checks before anything was sent
    (``checked_by == "client"``), or by Countersign's validation (``"server"``, answered ``422``).

    ``phase`` is the phase that refused it (``parse``, ``resolve``, ``type`` or ``authorize``) and
    ``diagnostics`` the server's list of ``{"phase", "code", "stepId"?, "path"?, "message"}``.
    """

    code = "invalid_submission"

    def __init__(
        self,
        diagnostics: Sequence[dict[str, Any]],
        *,
        phase: str | None = None,
        checked_by: str = "client",
        run_id: str | None = None,
    ) -> None:
        self.diagnostics = list(diagnostics)
        self.phase = phase or (self.diagnostics[0].get("phase") if self.diagnostics else None) or "parse"
        self.checked_by = checked_by
        self.run_id = run_id
        lead = (
            "the plan was not submitted"
            if checked_by == "client"
            else f"Countersign refused the plan ({self.phase} phase)"
        )
        lines = "".join(f"\n  - {d.get('message', d)}" for d in self.diagnostics)
        super().__init__(f"{lead}:{lines}")


class DecisionTimeout(CountersignError):
    """``wait_for_decision`` (or ``wait_for_release``) gave up: nobody decided (nor released the
    step ``step_id``) within the timeout. The run is still open."""

    code = "decision_timeout"

    def __init__(
        self, run_id: str, timeout: float, last_error: BaseException | None = None, step_id: str | None = None
    ) -> None:
        self.run_id = run_id
        self.timeout = timeout
        self.last_error = last_error
        self.step_id = step_id
        awaited = "" if step_id is None else f"release of step {step_id} nor "
        super().__init__(f"no {awaited}decision on run {run_id} within {timeout:g} s (the run is still open)")


class VerificationError(CountersignError):
    """``verify_step`` refused a step: do not run it.

    ``reason`` is the TypeScript client's: ``bad_receipt`` (forged, altered, or signed by a key
    Countersign does not list), ``not_approved`` (not approved, or not this agent's),
    ``not_released`` (a release of another step, or another agent's), ``expired``,
    ``plan_mismatch``, ``unknown_step``, ``digest_mismatch`` (not the step that was approved) or
    ``dependency_not_applied`` (a step it depends on is not reported applied, or Countersign could
    not be asked; the message names it) or ``world_changed`` (``WorldChanged``: a target moved since
    approval).
    """

    code = "verification_failed"

    def __init__(self, reason: str, message: str) -> None:
        self.reason = reason
        super().__init__(f"{reason}: {message}")
        self.message = message


class WorldChanged(VerificationError):
    """A target the step was approved against moved since (or could not be read now): the approvers
    saw another world. Preview again and ask for approval again; never apply.

    ``entity`` is ``{"type", "id"}``, ``approved_version`` the version the approvers saw and
    ``current_version`` the one read now (None when it could not be read).
    """

    def __init__(
        self, entity: dict[str, str], approved_version: str, current_version: str | None, message: str
    ) -> None:
        super().__init__("world_changed", message)
        self.entity = entity
        self.approved_version = approved_version
        self.current_version = current_version


class RequestError(CountersignError):
    """A request Countersign refused, or that got no usable answer after the client's retries.

    ``status`` is the HTTP status (None without an answer), ``code`` the server's error code
    (``unauthorized``, ``not_found``, ``run_exists``, …) or ``network_error`` / ``bad_response``,
    ``request`` says ``METHOD /path``, and ``retry_after`` (seconds) what the server asked for.
    """

    def __init__(
        self,
        code: str,
        status: int | None,
        message: str,
        request: str,
        *,
        retry_after: float | None = None,
    ) -> None:
        self.status = status
        self.message = message
        self.request = request
        self.retry_after = retry_after
        super().__init__(f"{request}: {'' if status is None else f'{status} '}{code}: {message}", code=code)

    @property
    def retriable(self) -> bool:
        """Whether trying again later may succeed: no answer, a 429 or a 5xx."""
        if self.status is None:
            return self.code == "network_error"
        return self.status == 429 or self.status >= 500


class AuthError(RequestError):
    """``401 unauthorized``: unknown agent, wrong secret, or a clock more than 5 minutes off."""


class InvalidRequest(RequestError):
    """``400``/``405``/``413``: the request is not the endpoint's shape, or too large. Fix the request."""


class NotFound(RequestError):
    """``404 not_found``: no such run for this agent (``code == "not_found"``), or no such step in
    the approved plan (``code == "unknown_step"``)."""


class Conflict(RequestError):
    """``409``: the request conflicts with what the run already holds (``run_exists`` on submit)."""


class AlreadyClaimed(Conflict):
    """``409 already_claimed``: the step was claimed or finished before. **Do not run it.**

    ``after_lost_answer`` says an earlier attempt of this same report got no answer and may have been
    recorded, so the claim may be this call's own; still do not run the step — it stays ``applying``,
    turns ``uncertain`` and a person decides. ``outcome`` is the recorded outcome when the server
    says which.
    """

    def __init__(self, *args: Any, after_lost_answer: bool = False, outcome: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.after_lost_answer = after_lost_answer
        self.outcome = outcome


class NotApproved(Conflict):
    """``409 not_approved``: an outcome for a run that is not approved (pending, rejected, expired)."""


class RateLimited(RequestError):
    """``429 rate_limited`` after the client's retries; ``retry_after`` is how long the server asked."""


class Unavailable(RequestError):
    """No answer (``network_error``) or a 5xx (``internal``, ``unavailable``) after the client's retries."""


class BadResponse(RequestError):
    """``bad_response``: an answer that is not the protocol's (a proxy's HTML page, a redirect)."""
