"""The agent's side of Countersign's HTTP API (docs/http-api.md), in one class: ``Client``."""

from __future__ import annotations

import email.utils
import http.client
import math
import os
import random
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from .canonical import CanonicalJsonError, canonical_json, loads, plan_digest, step_digest
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
)
from .receipts import ReceiptKeys, keys_from_jwks, verify_receipt
from .signing import signed_headers
from .wire import Decision, DecisionStep, Precondition, Provenance, Release
from .world import ReadVersion, check_world

__all__ = ["Client", "Outcome", "Submitted", "VerifiedStep", "new_run_id"]

RUN_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
MAX_WAIT_SECONDS = 60
MAX_STEPS = 50
DETAIL_MAX = 2000
# A long poll answered sooner than this was not held by the server: do not poll in a tight loop.
EARLY_ANSWER_SECONDS = 0.5
# An unknown kid refetches the JWKS at most this often, so forged kids cannot make us hammer the server.
JWKS_REFETCH_SECONDS = 60.0
STATUS_CODES = {
    400: "invalid_request",
    401: "unauthorized",
    404: "not_found",
    405: "method_not_allowed",
    413: "too_large",
    429: "rate_limited",
    500: "internal",
    503: "unavailable",
}


@dataclass(frozen=True)
class Submitted:
    """What ``submit`` answers: ``status`` is ``pending`` (people decide) or ``approved`` (by policy)."""

    run_id: str
    status: str


@dataclass(frozen=True)
class VerifiedStep:
    """A step ``verify_step`` passed: the step as approved, who wrote it, and the target versions the
    approvers saw (``preconditions``, empty when it has none; checked when ``read_version`` was given)."""

    step: DecisionStep
    provenance: Provenance
    preconditions: list[Precondition] = field(default_factory=list)


@dataclass(frozen=True)
class Outcome:
    """A step's outcome as the server recorded it (``at`` is when, ISO 8601 UTC)."""

    run_id: str
    step_id: str
    status: str
    at: str
    detail: str | None = None
    metrics: dict[str, int] | None = None


@dataclass(frozen=True)
class _Answer:
    status: int
    body: Any
    # An earlier attempt of this call got no answer or a 5xx, and may have been acted on.
    after_lost_answer: bool


def new_run_id(now: float | None = None) -> str:
    """A UUIDv7 (RFC 9562): 48 bits of unix milliseconds, then random bits — unguessable, sorts by time."""
    ms = int((time.time() if now is None else now) * 1000)
    data = bytearray(ms.to_bytes(6, "big") + os.urandom(10))
    data[6] = 0x70 | (data[6] & 0x0F)
    data[8] = 0x80 | (data[8] & 0x3F)
    text = data.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class Client:
    """An agent's client for Countersign: submit plans, wait for decisions, verify each step right
    before its effect, report outcomes.

    Requests are signed with the agent's secret (which signs requests and nothing else); decisions
    carry Countersign's Ed25519 receipt, which ``verify_step`` checks with the public keys Countersign
    publishes (``/.well-known/jwks.json``, fetched on first use) or the ones you pin.

    Every call is safe to repeat, and the client repeats what may succeed later — no answer, a 429
    (after its ``Retry-After``) and a 5xx — with jittered exponential backoff. One ``Client`` may be
    shared between threads.

    Example::

        client = Client("http://127.0.0.1:3000", "freight-ops", secret)
        submitted = client.submit({"summary": "…", "steps": [...], "expiresIn": "2h"})
        decision = client.wait_for_decision(submitted.run_id, timeout=3600)
        for step in decision["plan"]["steps"] if decision["plan"] else []:
            client.verify_step(decision, step)                       # raises VerificationError
            client.report_outcome(submitted.run_id, step["id"], "applying")  # raises AlreadyClaimed
            run(step)
            client.report_outcome(submitted.run_id, step["id"], "applied")
    """

    def __init__(
        self,
        url: str,
        agent: str,
        secret: str,
        *,
        public_keys: Mapping[str, Any] | None = None,
        request_timeout: float = 30.0,
        attempts: int = 5,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """``url`` is Countersign's base URL (a path prefix is part of every signed path); ``agent``
        and ``secret`` are as in Countersign's config. ``public_keys`` pins a JWKS instead of fetching
        it. ``request_timeout`` is one request's timeout in seconds beyond a long poll's wait;
        ``attempts`` the tries per call (the first included); ``clock`` gives unix seconds."""
        if not isinstance(secret, str) or secret == "":
            raise CountersignError("Client needs the agent's secret")
        if not isinstance(agent, str) or not ID_PATTERN.fullmatch(agent):
            raise CountersignError(f"not an agent name: {agent!r}")
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CountersignError(f"the Countersign url must be http(s)://host…, not {url!r}")
        if parts.query or parts.fragment:
            raise CountersignError("the Countersign url takes no query or fragment")
        self.agent = agent
        self._secret = secret
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._base_path = parts.path.rstrip("/")
        self._timeout = request_timeout
        self._attempts = max(1, attempts)
        self._clock = clock
        self._keys_lock = threading.Lock()
        self._pinned = public_keys is not None
        self._keys: ReceiptKeys | None = None
        self._last_refetch = -math.inf
        if public_keys is not None:
            try:
                self._keys = keys_from_jwks(public_keys)
            except ValueError as error:
                raise CountersignError(f"public_keys: {error}") from error

    # -- the API -------------------------------------------------------------------------------

    def submit(self, plan: Mapping[str, Any], *, if_blocked: str | None = None) -> Submitted:
        """Submits a plan (``POST /v1/runs``) and answers once Countersign has validated it.

        ``plan`` is the envelope of docs/http-api.md without ``agent``: ``steps`` (``{"id"?,
        "tool", "args"}``), and optionally ``runId`` (default: a fresh UUIDv7), ``summary``,
        ``context``, and ``expiresIn`` (``"2h"``) or ``expiresAt`` (ISO string or aware datetime).
        Raises ``InvalidPlan`` when the plan is refused — by the local checks before anything is
        sent (``checked_by="client"``), or by the server (``"server"``, with its ``phase`` and
        ``diagnostics``). The same plan under the same run id answers as the first time; another
        plan under it raises ``Conflict`` (``code == "run_exists"``).

        ``if_blocked="refuse"`` (the envelope's ``ifBlocked``) has the server refuse a plan with a step
        that policy blocks — ``InvalidPlan`` with phase ``authorize`` and code ``blocked`` — instead of
        posting it; ``"review"`` (the server's default) posts it anyway, for people to see.
        """
        if if_blocked is not None and isinstance(plan, Mapping):
            plan = {**plan, "ifBlocked": if_blocked}
        envelope = self._envelope(plan)
        run_id = envelope["runId"]
        try:
            body = canonical_json(envelope).encode("utf-8")  # one text for every attempt
        except CanonicalJsonError as error:
            code = error.code if error.code != "not_json" else "invalid_field"
            raise InvalidPlan(
                [{"phase": "parse", "code": code, "path": error.path, "message": str(error)}], run_id=run_id
            ) from None
        answer = self._request("POST", "/v1/runs", body)
        if answer.status == 422 and isinstance(answer.body, Mapping) and "diagnostics" in answer.body:
            raise InvalidPlan(
                answer.body["diagnostics"],
                phase=answer.body.get("phase"),
                checked_by="server",
                run_id=answer.body.get("runId") or run_id,
            )
        if not 200 <= answer.status < 300:
            raise self._refusal("POST", "/v1/runs", answer)
        accepted = answer.body
        if not isinstance(accepted, Mapping) or accepted.get("status") not in ("pending", "approved"):
            raise self._bad_response("POST", "/v1/runs", answer.status, "not a submission answer")
        if accepted.get("runId") != run_id:
            raise self._bad_response(
                "POST", "/v1/runs", answer.status, f"it names run {accepted.get('runId')}, not {run_id}"
            )
        return Submitted(run_id=run_id, status=accepted["status"])

    def get_run(self, run_id: str) -> dict[str, Any]:
        """The run as it stands (``GET /v1/runs/{id}``): status, version, steps, who is awaited.
        For showing progress; act only on a decision. Raises ``NotFound`` for a run not this agent's."""
        path = f"/v1/runs/{_run_id(run_id)}"
        answer = self._request("GET", path)
        if answer.status != 200 or not isinstance(answer.body, dict):
            raise self._refusal("GET", path, answer)
        return answer.body

    def get_decision(self, run_id: str) -> Decision | None:
        """The run's decision if there is one yet, else None (no waiting)."""
        return self._read_decision(_run_id(run_id), 0, None)

    def wait_for_decision(self, run_id: str, timeout: float = 600.0) -> Decision:
        """The run's decision, whether it was made before or after this call, by long polls
        (``GET /v1/runs/{id}/decision?wait=…``) of up to 60 s each.

        Raises ``DecisionTimeout`` after ``timeout`` seconds without a decision (the run stays
        open). A server that cannot be reached is tried again until then; a run that is not this
        agent's raises ``NotFound``.
        """
        _run_id(run_id)
        return self._poll(run_id, timeout, None, lambda wait, deadline: self._read_decision(run_id, wait, deadline))

    def get_releases(self, run_id: str) -> dict[str, Any]:
        """The run's releases so far (``GET /v1/runs/{id}/releases``): ``{"runId", "status",
        "releases"}`` — each step released before the plan is decided, as its signed release, oldest
        first. Once ``status`` is not ``pending`` no more come and the run's decision is there."""
        return self._read_releases(_run_id(run_id), 0, 0, None)

    def wait_for_release(self, run_id: str, step_id: str, timeout: float = 600.0) -> Release | Decision:
        """What lets ``step_id`` run, as soon as there is one: its release (a ``continue`` step whose
        approvals are complete and whose dependencies are applied), or else the run's decision once
        it is made — which approves the step, or says why it will not run (``verify_step`` tells).
        Long polls as ``wait_for_decision``; raises ``DecisionTimeout`` (naming the step) after
        ``timeout`` seconds."""
        _run_id(run_id)
        held = 0

        def read(wait: int, deadline: float) -> Release | Decision | None:
            nonlocal held
            answer = self._read_releases(run_id, held, wait, deadline)
            release = next((r for r in answer["releases"] if r.get("stepId") == step_id), None)
            if release is not None:
                return release  # type: ignore[no-any-return]  # verify_step checks it before anything runs
            held = len(answer["releases"])
            if answer["status"] == "pending":
                return None
            return self._read_decision(run_id, 0, deadline)

        return self._poll(run_id, timeout, step_id, read)

    def _poll(
        self,
        run_id: str,
        timeout: float,
        step_id: str | None,
        read: Callable[[int, float], Any],
    ) -> Any:
        """Long polls ``read(wait, deadline)`` until it answers, retrying what may succeed later."""
        deadline = time.monotonic() + timeout
        last_error: RequestError | None = None
        failures = early = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DecisionTimeout(run_id, timeout, last_error, step_id)
            started = time.monotonic()
            try:
                answer = read(min(MAX_WAIT_SECONDS, math.ceil(remaining)), deadline)
            except RequestError as error:
                if not error.retriable:
                    raise
                last_error = error
                failures += 1
                self._pause(_backoff(failures), deadline)
                continue
            if answer is not None:
                return answer
            failures = 0
            early = early + 1 if time.monotonic() - started < EARLY_ANSWER_SECONDS else 0
            if early:
                self._pause(_backoff(early), deadline)

    def verify_step(
        self,
        grant: Decision | Release | Mapping[str, Any],
        step: Mapping[str, Any],
        *,
        now: float | None = None,
        read_version: ReadVersion | None = None,
    ) -> VerifiedStep:
        """The gate in front of an effect: call it right before running ``step``, with the exact
        ``tool`` and ``args`` about to run. ``grant`` is the run's decision, or the step's release
        (``wait_for_release``). Raises ``VerificationError`` (do not run the step) unless:

        - the receipt is Countersign's Ed25519 signature over the grant (``bad_receipt``);
        - the run was approved, and the decision is this agent's (``not_approved``); or the grant is
          this agent's release of this very step (``not_released``);
        - the approval has not expired (``expired``);
        - the plan matches its digest (``plan_mismatch``);
        - the step id is in the approved version (``unknown_step``);
        - the step digest recomputed from ``tool``, ``args`` (and ``dependsOn``, the approved one when
          the step does not say) is the approved one (``digest_mismatch``);
        - every step it depends on is reported applied (``dependency_not_applied``, naming it): only
          for a step with dependencies, Countersign is asked (``GET /v1/runs/{id}``); when it cannot
          be, the step is refused all the same;
        - with ``read_version(type, id)``, last: every target the step was approved against is still
          at the version the approvers saw (``WorldChanged``, reason ``world_changed``: it moved, is
          gone — None — or ``read_version`` raised). Without it, check ``preconditions`` of the
          answer yourself (``check_world``) right before the effect.

        The keys are Countersign's JWKS (fetched on first use, and again when a receipt names a kid
        it does not list, at most once a minute) or the pinned ones. Raises ``RequestError`` only
        when the keys cannot be fetched — then nothing is verified and the step must not run.
        """
        kind = "release" if grant.get("kind") == "release" else "decision"
        keys = self._receipt_keys()
        receipt = verify_receipt(grant, keys)
        if not receipt.ok and receipt.reason == "unknown_kid":
            fresh = self._refresh_keys_for_unknown_kid()
            if fresh is not None:
                keys = fresh
                receipt = verify_receipt(grant, keys)
        if not receipt.ok:
            raise VerificationError(
                "bad_receipt", f"the {kind} receipt does not verify with Countersign's keys: {receipt.message}"
            )
        verified = self._check_signed(grant, step, self._clock() if now is None else now)
        depends_on = list(verified.step.get("dependsOn") or [])
        if depends_on:
            try:
                applied = set(self.get_run(str(grant.get("runId")))["applied"])
            except (RequestError, KeyError, TypeError) as error:
                raise VerificationError(
                    "dependency_not_applied",
                    f"step {step.get('id')} depends on {', '.join(depends_on)}, and Countersign could not be "
                    f"asked which steps are applied ({error}): not running it",
                ) from None
            unmet = [dependency for dependency in depends_on if dependency not in applied]
            if unmet:
                raise VerificationError(
                    "dependency_not_applied",
                    f"step {step.get('id')} depends on {', '.join(unmet)}, not reported applied yet",
                )
        if read_version is not None:
            check_world(verified.preconditions, read_version)
        return verified

    def report_outcome(
        self,
        run_id: str,
        step_id: str,
        status: str,
        detail: str | None = None,
        metrics: Mapping[str, int] | None = None,
    ) -> Outcome:
        """Reports a step's outcome (``POST …/steps/{stepId}/outcome``).

        Report ``applying`` right before the effect: it claims the step. A second claim (the same
        decision twice, a second executor) raises ``AlreadyClaimed`` — do not run the step then.
        After the effect report ``applied``, or ``failed`` with a ``detail`` (cut to 2,000
        characters) and ``metrics``: named whole numbers about what the step did
        (``{"refund_cents": 148900}``, at most 20, names lower-case with ``_``), which
        ``npm run insights`` compares across agent-written and edited steps. Raises ``NotApproved`` for a run that is not approved, ``NotFound`` with
        ``code == "not_found"`` (no such run for this agent) or ``"unknown_step"``.
        """
        if status not in ("applying", "applied", "failed"):
            raise CountersignError(f"status must be applying, applied or failed, not {status!r}")
        if not isinstance(step_id, str) or not ID_PATTERN.fullmatch(step_id):
            raise CountersignError(f"not a step id: {step_id!r}")
        path = f"/v1/runs/{_run_id(run_id)}/steps/{step_id}/outcome"
        report: dict[str, object] = {"status": status}
        if detail is not None:
            report["detail"] = _cut_utf16(str(detail), DETAIL_MAX)
        if metrics is not None:
            report["metrics"] = _outcome_metrics(metrics)
        answer = self._request("POST", path, canonical_json(report).encode("utf-8"))
        if 200 <= answer.status < 300 and isinstance(answer.body, Mapping):
            body = answer.body
            return Outcome(
                run_id=body.get("runId", run_id),
                step_id=body.get("stepId", step_id),
                status=body.get("status", status),
                at=body.get("at", ""),
                detail=body.get("detail"),
                metrics=body.get("metrics"),
            )
        if answer.status == 404:
            try:
                self.get_run(run_id)
            except NotFound:
                raise NotFound(
                    "not_found", 404, f"there is no run {run_id} for agent {self.agent}", f"POST {path}"
                ) from None
            raise NotFound("unknown_step", 404, f"run {run_id} has no step {step_id}", f"POST {path}")
        raise self._refusal("POST", path, answer)

    # -- verification ------------------------------------------------------------------------

    def _check_signed(self, grant: Mapping[str, Any], step: Mapping[str, Any], now: float) -> VerifiedStep:
        """The checks after the receipt verified, in the TypeScript client's order and words (the
        dependencies are verify_step's, last)."""
        decision = grant
        plan = grant.get("plan")
        release = grant.get("kind") == "release"
        if release:
            if grant.get("stepId") != step.get("id") or not isinstance(plan, Mapping):
                raise VerificationError(
                    "not_released", f"step {step.get('id')} was not released: this release is for {grant.get('stepId')}"
                )
        elif grant.get("status") != "approved" or not isinstance(plan, Mapping):
            released = any(entry.get("stepId") == step.get("id") for entry in grant.get("released") or [])
            raise VerificationError(
                "not_approved",
                f"the run was {grant.get('status')}; step {step.get('id')} was released before that, so only its "
                "release lets it run"
                if released
                else f"the run was {grant.get('status')}, not approved",
            )
        expires_at = _parse_time(plan.get("expiresAt"))
        if expires_at is None or now >= expires_at:
            raise VerificationError("expired", f"the approval expired at {plan.get('expiresAt')}")
        try:
            intact = plan_digest(plan) == plan.get("digest")
        except (CanonicalJsonError, KeyError, TypeError):
            intact = False
        if not intact:
            raise VerificationError(
                "plan_mismatch", f"the plan in the {'release' if release else 'decision'} does not match its digest"
            )
        step_id = step.get("id")
        approved = next((s for s in plan["steps"] if s.get("id") == step_id), None)
        if approved is None:
            raise VerificationError(
                "unknown_step", f"step {step_id} is not in the approved plan (version {decision.get('version')})"
            )
        try:
            # The approved dependencies stand for a step that does not name its own.
            digest = step_digest(step if "dependsOn" in step else {**step, "dependsOn": approved.get("dependsOn")})
        except (CanonicalJsonError, KeyError, TypeError) as error:
            raise VerificationError("digest_mismatch", f"step {step_id} cannot be digested: {error}") from None
        if digest != approved["digest"] or step_digest(approved) != approved["digest"]:
            raise VerificationError(
                "digest_mismatch",
                f"step {step_id} is not what was approved (digest {digest[:12]}… ≠ {approved['digest'][:12]}…)",
            )
        if decision.get("agent") != self.agent or plan.get("agent") != self.agent:
            # Countersign's key signs every agent's decisions: one for another agent approves nothing here.
            raise VerificationError(
                "not_released" if release else "not_approved",
                f"the {'release' if release else 'decision'} is for agent {decision.get('agent')!r}: it "
                f"{'releases' if release else 'approves'} nothing for {self.agent!r}",
            )
        return VerifiedStep(
            step=approved, provenance=approved["provenance"], preconditions=list(approved.get("preconditions") or [])
        )

    def _receipt_keys(self) -> ReceiptKeys:
        with self._keys_lock:
            if self._keys is None:
                self._keys = self._fetch_keys()
            return self._keys

    def _refresh_keys_for_unknown_kid(self) -> ReceiptKeys | None:
        with self._keys_lock:
            if self._pinned or time.monotonic() - self._last_refetch < JWKS_REFETCH_SECONDS:
                return None
            self._last_refetch = time.monotonic()
            self._keys = self._fetch_keys()
            return self._keys

    def _fetch_keys(self) -> ReceiptKeys:
        path = "/.well-known/jwks.json"
        answer = self._request("GET", path, signed=False)
        if answer.status != 200:
            raise self._refusal("GET", path, answer)
        try:
            return keys_from_jwks(answer.body)
        except ValueError as error:
            raise self._bad_response("GET", path, answer.status, f"JWKS: {error}") from None

    # -- requests ----------------------------------------------------------------------------

    def _envelope(self, plan: Mapping[str, Any]) -> dict[str, Any]:
        """The envelope to send, after the checks that need no config (else ``InvalidPlan``)."""
        if not isinstance(plan, Mapping):
            raise CountersignError(f"a plan is a mapping, not {type(plan).__name__}")
        envelope = dict(plan)
        run_id = envelope.get("runId") or new_run_id(self._clock())
        envelope["runId"] = run_id
        problems: list[dict[str, Any]] = []

        def problem(code: str, message: str, path: list[str | int]) -> None:
            problems.append({"phase": "parse", "code": code, "path": path, "message": message})

        if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id):
            problem("invalid_field", f"runId {run_id!r} is not a run id (letters, digits, - and _)", ["runId"])
        if envelope.setdefault("agent", self.agent) != self.agent:
            problem("invalid_field", f"agent is {envelope['agent']!r}, but this client is {self.agent!r}", ["agent"])
        if "ifBlocked" in envelope and envelope["ifBlocked"] not in ("review", "refuse"):
            problem("invalid_field", f'ifBlocked must be "review" or "refuse", not {envelope["ifBlocked"]!r}', ["ifBlocked"])
        if "expiresIn" in envelope and "expiresAt" in envelope:
            problem("invalid_field", "give expiresIn or expiresAt, not both", ["expiresAt"])
        elif isinstance(envelope.get("expiresAt"), datetime):
            at = envelope["expiresAt"]
            if at.tzinfo is None:
                problem("invalid_field", "expiresAt needs a time zone (a naive datetime is ambiguous)", ["expiresAt"])
            else:
                # Whole seconds, UTC: the instant is part of the plan digest and shown on the card.
                seconds = math.ceil(at.timestamp())
                envelope["expiresAt"] = datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        steps = envelope.get("steps")
        if not isinstance(steps, (list, tuple)) or not steps:
            problem("no_steps", "a plan needs at least one step", ["steps"])
        elif len(steps) > MAX_STEPS:
            problem("too_many_steps", f"a plan has at most {MAX_STEPS} steps, not {len(steps)}", ["steps"])
        else:
            seen: set[str] = set()
            for index, step in enumerate(steps):
                if not isinstance(step, Mapping):
                    problem("invalid_field", "a step is { id?, tool, args }", ["steps", index])
                    continue
                if not isinstance(step.get("tool"), str) or not isinstance(step.get("args"), Mapping):
                    problem("missing_field", "a step needs a tool (string) and args (object)", ["steps", index])
                step_id = step.get("id")
                if step_id is not None:
                    if not isinstance(step_id, str) or not ID_PATTERN.fullmatch(step_id):
                        problem("invalid_step_id", f"step id {step_id!r}: letters, digits, - and _", ["steps", index, "id"])
                    elif step_id in seen:
                        problem("duplicate_step_id", f"step id {step_id!r} is used twice", ["steps", index, "id"])
                    else:
                        seen.add(step_id)
        if problems:
            raise InvalidPlan(problems, run_id=run_id if isinstance(run_id, str) else None)
        return envelope

    def _read_releases(self, run_id: str, after: int, wait: int, deadline: float | None) -> dict[str, Any]:
        path = f"/v1/runs/{run_id}/releases?after={after}&wait={wait}"
        answer = self._request("GET", path, wait=wait, deadline=deadline)
        if answer.status != 200:
            raise self._refusal("GET", path, answer)
        body = answer.body
        if (
            not isinstance(body, dict)
            or body.get("runId") != run_id
            or not isinstance(body.get("status"), str)
            or not isinstance(body.get("releases"), list)
            or not all(isinstance(release, dict) for release in body["releases"])
        ):
            raise self._bad_response("GET", path, answer.status, f"not the releases of run {run_id}")
        return body

    def _read_decision(self, run_id: str, wait: int, deadline: float | None) -> Decision | None:
        path = f"/v1/runs/{run_id}/decision?wait={wait}"
        answer = self._request("GET", path, wait=wait, deadline=deadline)
        if answer.status == 202 and isinstance(answer.body, Mapping) and answer.body.get("status") == "pending":
            return None
        if answer.status != 200:
            raise self._refusal("GET", path, answer)
        decision = answer.body
        if (
            not isinstance(decision, dict)
            or decision.get("runId") != run_id
            or not isinstance(decision.get("status"), str)
            or "receipt" not in decision
        ):
            raise self._bad_response("GET", path, answer.status, f"not a decision on run {run_id}")
        return decision  # type: ignore[return-value]  # verify_step checks it before anything runs

    def _request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        *,
        signed: bool = True,
        wait: int = 0,
        deadline: float | None = None,
    ) -> _Answer:
        """One call: the first definite answer (2xx, or a 4xx other than 429) as it is; raises a
        ``RequestError`` once retries run out (or at ``deadline``, a ``time.monotonic()`` value)."""
        after_lost_answer = False
        for attempt in range(1, self._attempts + 1):
            try:
                status, parsed, retry_after = self._attempt(method, path, body, signed, wait, deadline)
            except RequestError as error:
                if error.code != "network_error":
                    raise
                after_lost_answer = True
                failure: RequestError = error
                retry_after = None
            else:
                answer = _Answer(status, parsed, after_lost_answer)
                if status != 429 and status < 500:
                    return answer
                if status >= 500:
                    after_lost_answer = True
                failure = self._refusal(method, path, answer, retry_after)
            if attempt >= self._attempts or (retry_after or 0) > MAX_WAIT_SECONDS:
                raise failure
            pause = retry_after if retry_after is not None else _backoff(attempt)
            if deadline is not None and time.monotonic() + pause >= deadline:
                raise failure
            time.sleep(pause)
        raise AssertionError("unreachable")

    def _attempt(
        self, method: str, path: str, body: bytes | None, signed: bool, wait: int, deadline: float | None
    ) -> tuple[int, Any, float | None]:
        target = self._base_path + path
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if signed:
            # Signed afresh each attempt: a retry after a long Retry-After still has a current timestamp.
            headers.update(signed_headers(self.agent, self._secret, method, target, body or b"", self._clock()))
        timeout = self._timeout + wait
        if deadline is not None:
            timeout = max(0.1, min(timeout, deadline - time.monotonic() + 1))
        connection_class = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        connection = connection_class(self._host, self._port, timeout=timeout)
        try:
            connection.request(method, target, body=body, headers=headers)
            response = connection.getresponse()
            raw = response.read()
            retry_after_header = response.getheader("Retry-After")
            location = response.getheader("Location")
        except (OSError, http.client.HTTPException) as error:
            raise RequestError(
                "network_error", None, f"no answer ({type(error).__name__}: {error})", f"{method} {path}"
            ) from error
        finally:
            connection.close()
        if 300 <= response.status < 400:
            raise self._bad_response(
                method, path, response.status,
                f"redirected to {location or '?'}: point the client's url where Countersign answers",
            )
        parsed: Any = None
        if raw:
            try:
                parsed = loads(raw)
            except ValueError:
                if 200 <= response.status < 300:
                    raise self._bad_response(method, path, response.status, "the body is not JSON") from None
                parsed = raw.decode("utf-8", "replace")  # an error page: kept for the message
        return response.status, parsed, _retry_after(retry_after_header, self._clock())

    def _refusal(self, method: str, path: str, answer: _Answer, retry_after: float | None = None) -> RequestError:
        """The exception for an answer the caller does not handle, typed by status and code."""
        error = answer.body.get("error") if isinstance(answer.body, Mapping) else None
        if isinstance(error, Mapping) and isinstance(error.get("code"), str):
            code, message = error["code"], str(error.get("message", ""))
        else:
            status = answer.status
            code = STATUS_CODES.get(status) or ("internal" if status >= 500 else "bad_response")
            preview = "" if answer.body is None else f": {str(answer.body)[:200]}"
            message = f"unexpected answer {status}{preview}"
        request = f"{method} {path}"
        status = answer.status
        if status == 401:
            return AuthError(code, status, f"{message} (check the agent name, its secret and the clock)", request)
        if status == 409 and code == "already_claimed":
            if answer.after_lost_answer:
                message += (
                    " (an earlier attempt of this report got no answer: the claim may be its own; "
                    "the step is left for a person, as uncertain)"
                )
            outcome = error.get("outcome") if isinstance(error, Mapping) else None
            return AlreadyClaimed(
                code, status, message, request, after_lost_answer=answer.after_lost_answer, outcome=outcome
            )
        if status == 409 and code == "not_approved":
            return NotApproved(code, status, message, request)
        by_status: dict[int, type[RequestError]] = {
            400: InvalidRequest, 404: NotFound, 405: InvalidRequest, 409: Conflict, 413: InvalidRequest,
            429: RateLimited,
        }
        kind = by_status.get(status) or (Unavailable if status >= 500 else BadResponse)
        return kind(code, status, message, request, retry_after=retry_after)

    def _bad_response(self, method: str, path: str, status: int, detail: str) -> BadResponse:
        return BadResponse("bad_response", status, f"the answer is not the protocol's: {detail}", f"{method} {path}")

    @staticmethod
    def _pause(seconds: float, deadline: float) -> None:
        time.sleep(max(0.0, min(seconds, deadline - time.monotonic())))


def _run_id(run_id: str) -> str:
    if not isinstance(run_id, str) or not RUN_ID_PATTERN.fullmatch(run_id):
        raise CountersignError(f"not a run id: {run_id!r}")
    return run_id


def _backoff(attempt: int, base: float = 0.25, ceiling: float = 10.0) -> float:
    """Exponential backoff with jitter in its upper half: base·2^(n-1), at most ``ceiling`` seconds."""
    top = min(ceiling, base * 2 ** min(attempt - 1, 30))
    return top / 2 + random.random() * top / 2


def _retry_after(value: str | None, now: float) -> float | None:
    """``Retry-After`` in seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3)."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        return max(0.0, email.utils.parsedate_to_datetime(text).timestamp() - now)
    except (TypeError, ValueError):
        return None


def _parse_time(value: object) -> float | None:
    """Unix seconds of an ISO 8601 UTC time, or None when it cannot be read (then: expired)."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.timestamp() if parsed.tzinfo is not None else None


_METRIC_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")


def _outcome_metrics(metrics: Mapping[str, int]) -> dict[str, int]:
    """Checks named outcome numbers as the server does, so a mistake is named here."""
    if not isinstance(metrics, Mapping):
        raise CountersignError("metrics must be a mapping of names to whole numbers")
    if len(metrics) > 20:
        raise CountersignError("at most 20 metrics per report")
    checked: dict[str, int] = {}
    for name, value in metrics.items():
        if not isinstance(name, str) or not _METRIC_NAME.fullmatch(name):
            raise CountersignError(
                f"not a metric name: {name!r} (lower-case letters, digits and _, starting with a letter)"
            )
        if isinstance(value, bool) or not isinstance(value, int) or abs(value) > 2**53 - 1:
            raise CountersignError(
                f"metric {name} must be a whole number (money in minor units: cents), not {value!r}"
            )
        checked[name] = value
    return checked


def _cut_utf16(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` UTF-16 code units: the server counts characters as JavaScript does."""
    units = text.encode("utf-16-le", "surrogatepass")
    if len(units) <= limit * 2:
        return text
    return units[: limit * 2].decode("utf-16-le", "surrogatepass")
