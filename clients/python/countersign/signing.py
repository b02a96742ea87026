"""Request signing (docs/http-api.md, Authentication): HMAC-SHA256 with the agent's secret over
``v1:<timestamp>:<METHOD>:<path-with-query>:<raw body>``, sent in three headers."""

from __future__ import annotations

import hashlib
import hmac

__all__ = ["signature", "signed_headers", "signing_text"]


def signing_text(timestamp: str, method: str, path_with_query: str, body: bytes = b"") -> bytes:
    """The exact bytes the signature covers; ``body`` is the raw body as sent (empty for a GET)."""
    head = f"v1:{timestamp}:{method.upper()}:{path_with_query}:"
    return head.encode("utf-8") + body


def signature(secret: str, timestamp: str, method: str, path_with_query: str, body: bytes = b"") -> str:
    """``v1=`` and the lower-case hex HMAC-SHA256 of the signing text, keyed by the secret's UTF-8 bytes.

    >>> signature('example-secret-do-not-use', '1775124000', 'GET',
    ...           '/v1/runs/019d47a8-6e00-7a3c-9f1e-4b2d8c0e1a77/decision?wait=30')
    'v1=4a17744423d235874c6c3a79b007bd3a83c64abc2b08bdb3bc2862eb22423cd7'
    """
    text = signing_text(timestamp, method, path_with_query, body)
    return "v1=" + hmac.new(secret.encode("utf-8"), text, hashlib.sha256).hexdigest()


def signed_headers(
    agent: str, secret: str, method: str, path_with_query: str, body: bytes, now: float
) -> dict[str, str]:
    """The three headers of a signed request at ``now`` (unix seconds; sign each attempt afresh)."""
    timestamp = str(int(now))
    return {
        "X-Countersign-Agent": agent,
        "X-Countersign-Timestamp": timestamp,
        "X-Countersign-Signature": signature(secret, timestamp, method, path_with_query, body),
    }
