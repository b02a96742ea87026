"""Canonical JSON and digests, as docs/canonical-json.md defines them.

The canonical text of a JSON value is what Countersign hashes (step and plan digests) and signs
(decision receipts), so an executor in Python must produce exactly the bytes JavaScript does: keys
sorted by UTF-16 code units, no whitespace, strings escaped as ``JSON.stringify`` escapes them,
safe integers only.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = [
    "MAX_SAFE_INTEGER",
    "CanonicalJsonError",
    "canonical_json",
    "loads",
    "plan_digest",
    "sha256_hex",
    "step_digest",
]

MAX_SAFE_INTEGER = 2**53 - 1
"""The largest integer JavaScript represents exactly; canonical numbers stay within ±this."""

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class CanonicalJsonError(ValueError):
    """A value that has no canonical JSON text: a fraction, -0, an unsafe integer, or not JSON.

    ``code`` is ``non_integer_number``, ``negative_zero``, ``unsafe_integer`` or ``not_json`` (the
    TypeScript implementation's codes); ``path`` says where, e.g. ``['steps', 0, 'args', 'amount']``.
    """

    def __init__(self, code: str, path: Sequence[str | int], detail: str) -> None:
        self.code = code
        self.path = list(path)
        where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path) or "(top)"
        super().__init__(f"{detail} at {where.lstrip('.')} ({code})")


def _utf16_key(key: str) -> bytes:
    # JavaScript's default sort compares UTF-16 code units; big-endian UTF-16 bytes compare the same way.
    return key.encode("utf-16-be", "surrogatepass")


def _quote(text: str) -> str:
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or 0xD800 <= code <= 0xDFFF:
            # Other control characters, and lone surrogates (a Python str holds a pair as one code
            # point, so any surrogate left here is alone), as lower-case \uXXXX like JSON.stringify.
            out.append(f"\\u{code:04x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _number(value: int | float, path: list[str | int]) -> str:
    if isinstance(value, float):
        if value == 0 and math.copysign(1.0, value) < 0:
            raise CanonicalJsonError("negative_zero", path, "-0 is not allowed")
        if math.isfinite(value) and value.is_integer():
            detail = f"{value!r} is written as a fraction; canonical numbers are integers"
        else:
            detail = f"{value!r} is not an integer"
        raise CanonicalJsonError("non_integer_number", path, detail)
    if abs(value) > MAX_SAFE_INTEGER:
        raise CanonicalJsonError("unsafe_integer", path, f"{value} is outside the safe integer range")
    return str(value)


def _write(value: Any, path: list[str | int], out: list[str]) -> None:
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(_quote(value))
    elif isinstance(value, (int, float)):
        out.append(_number(value, path))
    elif isinstance(value, Mapping):
        out.append("{")
        for index, key in enumerate(sorted(value, key=_keyed(path))):
            if index:
                out.append(",")
            out.append(_quote(key))
            out.append(":")
            _write(value[key], [*path, key], out)
        out.append("}")
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for index, element in enumerate(value):
            if index:
                out.append(",")
            _write(element, [*path, index], out)
        out.append("]")
    else:
        raise CanonicalJsonError("not_json", path, f"{type(value).__name__} is not a JSON value")


def _keyed(path: list[str | int]) -> Callable[[object], bytes]:
    """The sort key for one object's keys (refusing a key that is not a string)."""

    def key(name: object) -> bytes:
        if not isinstance(name, str):
            raise CanonicalJsonError("not_json", path, f"an object key must be a string, not {name!r}")
        return _utf16_key(name)

    return key


def canonical_json(value: Any) -> str:
    """The canonical JSON text of ``value`` (dicts, lists, str, int, bool, None).

    Raises ``CanonicalJsonError`` for anything else, including every ``float``: canonical numbers are
    safe integers, and money is an integer count of minor units.

    >>> canonical_json({"b": [1, "x"], "a": None})
    '{"a":null,"b":[1,"x"]}'
    """
    out: list[str] = []
    _write(value, [], out)
    return "".join(out)


def sha256_hex(text: str) -> str:
    """Lower-case hex SHA-256 of the UTF-8 bytes of ``text``.

    Lone surrogates never reach it from ``canonical_json`` (they are escaped), so the text encodes.
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def digested_dependencies(step: Mapping[str, Any]) -> dict[str, list[str]]:
    """Contract 2: a step's ``dependsOn`` as ``depends_on``, sorted and unique; nothing when it has none."""
    given = step.get("dependsOn") or []
    return {"depends_on": sorted(set(given))} if given else {}


def step_digest(step: Mapping[str, Any]) -> str:
    """The step digest: SHA-256 of canonical ``{"args", "depends_on"?, "tool"}``; the id is not covered."""
    return sha256_hex(canonical_json({"args": step["args"], **digested_dependencies(step), "tool": step["tool"]}))


def plan_digest(plan: Mapping[str, Any]) -> str:
    """The plan digest of a plan ``{runId, agent, expiresAt, steps}`` (summary and context not covered)."""
    return sha256_hex(
        canonical_json(
            {
                "agent": plan["agent"],
                "expires_at": plan["expiresAt"],
                "run_id": plan["runId"],
                "steps": [
                    {"args": s["args"], **digested_dependencies(s), "id": s["id"], "tool": s["tool"]}
                    for s in plan["steps"]
                ],
            }
        )
    )


def _parse_int(text: str) -> int | float:
    # JSON.parse reads "-0" as negative zero, which canonical JSON refuses; Python would read 0.
    return -0.0 if text == "-0" else int(text)


def _parse_float(text: str) -> int | float:
    # JSON.parse has one number type: 1.0 and 1e3 are the integers 1 and 1000 there.
    value = float(text)
    if value.is_integer() and abs(value) <= MAX_SAFE_INTEGER and not (value == 0 and text.startswith("-")):
        return int(value)
    return value


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads(text: str | bytes) -> Any:
    """Parses JSON the way ``JSON.parse`` reads its numbers, so canonical JSON of the result matches.

    ``1.0`` and ``1e3`` become the integers 1 and 1000 (one number type in JavaScript), ``-0``
    stays negative zero and ``2.5`` a float — which ``canonical_json`` then refuses, as Countersign
    does. ``NaN`` and ``Infinity`` are not JSON and raise ``ValueError``.
    """
    return json.loads(text, parse_int=_parse_int, parse_float=_parse_float, parse_constant=_no_constants)
