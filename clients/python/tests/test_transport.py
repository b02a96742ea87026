"""The client's transport and key handling against a scripted HTTP stand-in: signing with a path
prefix, retries (503, a dropped connection, 429 with Retry-After), a claim whose answer was lost,
redirects, error pages, and fetching the JWKS again after a key rotation."""

from __future__ import annotations

import base64
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from countersign import (
    AlreadyClaimed,
    BadResponse,
    Client,
    InvalidPlan,
    RateLimited,
    Unavailable,
    VerificationError,
    canonical_json,
    jwk_thumbprint,
    plan_digest,
    signature,
    step_digest,
)

AGENT, SECRET = "freight-ops", "freight-secret-0123456789"
PLAN = {"runId": "run-1", "steps": [{"id": "s1", "tool": "add_note", "args": {"ticket_id": "1", "note": "x"}}]}

# What the stand-in does with one request: an answer (status, headers, JSON body), or None to drop it.
Script = Callable[["Seen"], "tuple[int, dict[str, str], object] | None"]


@dataclass
class Seen:
    method: str
    target: str
    headers: dict[str, str]
    body: bytes

    @property
    def signed_correctly(self) -> bool:
        expected = signature(SECRET, self.headers["X-Countersign-Timestamp"], self.method, self.target, self.body)
        return self.headers.get("X-Countersign-Signature") == expected


@dataclass
class StandIn:
    url: str
    script: list[Script] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)


@pytest.fixture
def stand_in() -> Iterator[StandIn]:
    state = StandIn(url="")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            seen = Seen(self.command, self.path, dict(self.headers.items()), self.rfile.read(length))
            state.seen.append(seen)
            answer = state.script.pop(0)(seen) if state.script else (500, {}, {"error": {"code": "internal", "message": "unscripted"}})
            if answer is None:
                self.close_connection = True
                self.connection.shutdown(2)  # no answer at all
                return
            status, headers, body = answer
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()


def accepted(seen: Seen) -> tuple[int, dict[str, str], object]:
    return 202, {}, {"runId": json.loads(seen.body)["runId"], "status": "pending", "version": 1}


def refusal(status: int, code: str, headers: dict[str, str] | None = None) -> Script:
    return lambda seen: (status, headers or {}, {"error": {"code": code, "message": f"{code} here"}})


def test_signs_the_path_prefix_of_the_base_url_and_the_exact_body_sent(stand_in: StandIn) -> None:
    stand_in.script = [accepted]
    Client(stand_in.url + "/countersign/", AGENT, SECRET).submit(PLAN)
    (seen,) = stand_in.seen
    assert seen.target == "/countersign/v1/runs"
    assert seen.signed_correctly
    assert seen.headers["X-Countersign-Agent"] == AGENT
    assert json.loads(seen.body) == {**PLAN, "agent": AGENT}


def test_retries_a_503_and_a_dropped_connection_with_the_same_bytes_signed_afresh(stand_in: StandIn) -> None:
    stand_in.script = [refusal(503, "unavailable"), lambda seen: None, accepted]
    assert Client(stand_in.url, AGENT, SECRET).submit(PLAN).status == "pending"
    assert len(stand_in.seen) == 3
    assert len({s.body for s in stand_in.seen}) == 1
    assert all(s.signed_correctly for s in stand_in.seen)


def test_waits_as_long_as_a_429s_retry_after_says(stand_in: StandIn) -> None:
    stand_in.script = [refusal(429, "rate_limited", {"Retry-After": "1"}), accepted]
    started = time.monotonic()
    Client(stand_in.url, AGENT, SECRET).submit(PLAN)
    assert time.monotonic() - started >= 1


def test_gives_up_at_once_on_a_retry_after_too_long_to_wait(stand_in: StandIn) -> None:
    stand_in.script = [refusal(429, "rate_limited", {"Retry-After": "3600"})]
    with pytest.raises(RateLimited) as refused:
        Client(stand_in.url, AGENT, SECRET).submit(PLAN)
    assert refused.value.retry_after == 3600 and refused.value.retriable
    assert len(stand_in.seen) == 1


def test_a_claim_refused_after_a_lost_answer_says_it_may_be_its_own(stand_in: StandIn) -> None:
    stand_in.script = [lambda seen: None, refusal(409, "already_claimed")]
    with pytest.raises(AlreadyClaimed) as refused:
        Client(stand_in.url, AGENT, SECRET).report_outcome("run-1", "s1", "applying")
    assert refused.value.after_lost_answer
    assert "may be its own" in refused.value.message


def test_refuses_a_redirect_instead_of_following_it(stand_in: StandIn) -> None:
    stand_in.script = [lambda seen: (307, {"Location": "https://elsewhere.example/v1/runs"}, "")]
    with pytest.raises(BadResponse, match="elsewhere.example"):
        Client(stand_in.url, AGENT, SECRET).submit(PLAN)
    assert len(stand_in.seen) == 1


def test_reads_a_proxys_html_error_page_by_its_status(stand_in: StandIn) -> None:
    page: Script = lambda seen: (502, {"Content-Type": "text/html"}, "<html>Bad Gateway</html>")  # noqa: E731
    stand_in.script = [page] * 5
    with pytest.raises(Unavailable) as refused:
        Client(stand_in.url, AGENT, SECRET, attempts=2).get_run("run-1")
    assert (refused.value.status, refused.value.code) == (502, "internal")
    assert "Bad Gateway" in refused.value.message


def jwks_of(*keys: Ed25519PrivateKey) -> dict:
    def jwk(key: Ed25519PrivateKey) -> dict:
        raw = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        x = base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
        return {"kty": "OKP", "crv": "Ed25519", "x": x, "kid": jwk_thumbprint(x), "alg": "EdDSA", "use": "sig"}

    return {"keys": [jwk(key) for key in keys]}


def signed_decision(key: Ed25519PrivateKey, **changes: object) -> dict:
    """An approved decision for PLAN (with ``changes``), signed by ``key``, as Countersign would send it."""
    steps = [{**s, "digest": step_digest(s), "route": "review", "approvals": [{"userId": "U1", "at": "2026-04-01T10:00:00Z"}],
              "provenance": {"by": "agent", "userId": None, "version": 1, "change": None}} for s in PLAN["steps"]]
    plan = {"runId": "run-1", "agent": AGENT, "expiresAt": "2099-01-01T00:00:00Z", "steps": steps}
    unsigned = {"runId": "run-1", "agent": AGENT, "status": "approved", "version": 1,
                "plan": {**plan, "digest": plan_digest(plan)}, "decidedAt": "2026-04-01T10:00:00Z",
                "decidedBy": "U1", "reason": None, "phase": None, "diagnostics": [], "configDigest": "c0ffee",
                **changes}
    signed = key.sign(canonical_json(unsigned).encode())
    kid = jwks_of(key)["keys"][0]["kid"]
    return {**unsigned, "receipt": {"alg": "EdDSA", "kid": kid,
                                    "signature": base64.urlsafe_b64encode(signed).rstrip(b"=").decode()}}


def test_fetches_the_jwks_again_after_a_rotation_but_not_for_every_unknown_kid(stand_in: StandIn) -> None:
    old, new, stranger = (Ed25519PrivateKey.generate() for _ in range(3))
    stand_in.script = [lambda seen: (200, {}, jwks_of(old)), lambda seen: (200, {}, jwks_of(new, old))]
    client = Client(stand_in.url, AGENT, SECRET)
    step = PLAN["steps"][0]
    client.verify_step(signed_decision(old), step)
    client.verify_step(signed_decision(new), step)  # an unknown kid: the JWKS is fetched again
    assert [s.target for s in stand_in.seen] == ["/.well-known/jwks.json"] * 2
    assert "X-Countersign-Signature" not in stand_in.seen[0].headers
    with pytest.raises(VerificationError) as refused:
        client.verify_step(signed_decision(stranger), step)
    assert refused.value.reason == "bad_receipt"
    assert "is not one of the keys" in refused.value.message
    assert len(stand_in.seen) == 2  # not fetched again within the minute


def test_pinned_keys_are_never_fetched(stand_in: StandIn) -> None:
    key = Ed25519PrivateKey.generate()
    client = Client(stand_in.url, AGENT, SECRET, public_keys=jwks_of(key))
    assert client.verify_step(signed_decision(key), PLAN["steps"][0]).provenance["by"] == "agent"
    assert stand_in.seen == []


def test_sends_an_aware_datetime_expiry_as_whole_seconds_utc_and_refuses_a_naive_one(stand_in: StandIn) -> None:
    stand_in.script = [accepted]
    at = datetime(2099, 4, 3, 12, 0, 0, 250_000, tzinfo=timezone(timedelta(hours=2)))
    Client(stand_in.url, AGENT, SECRET).submit({**PLAN, "expiresAt": at})
    assert json.loads(stand_in.seen[0].body)["expiresAt"] == "2099-04-03T10:00:01Z"
    with pytest.raises(InvalidPlan) as refused:
        Client(stand_in.url, AGENT, SECRET).submit({**PLAN, "expiresAt": datetime(2099, 4, 3)})
    assert refused.value.checked_by == "client" and refused.value.diagnostics[0]["path"] == ["expiresAt"]
    assert len(stand_in.seen) == 1
