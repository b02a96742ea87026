"""The last check before an effect (issue 19): the targets a step was approved against are read again
from the executor's own systems, and the step runs only if each is still at the version the approvers
saw. Reading is the executor's (``read_version``); the comparison is ``check_preconditions``, the twin
of the TypeScript ``checkPreconditions``, in the same words. Fails closed: a read that raises or finds
nothing refuses the step."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import WorldChanged

__all__ = ["ReadVersion", "check_preconditions", "check_world"]

ReadVersion = Callable[[str, str], "str | None"]
"""``read_version(type, id)``: the entity's version now (a string: an ETag, an ``updated_at``, a
counter); None when it does not exist any more. Raising: it could not be read."""


def _moved(precondition: Mapping[str, Any], current: str | None, message: str | None = None) -> WorldChanged:
    kind, entity_id, approved = precondition["type"], precondition["id"], precondition["version"]
    name = f"{kind} {entity_id}"
    if message is None:
        message = (
            f"{name} could not be read now (it was at version {approved} when approved): preview again and "
            "ask for approval again; do not apply"
            if current is None
            else f"{name} changed since it was approved (version {approved} → {current}): preview again and ask "
            "for approval again; do not apply"
        )
    return WorldChanged({"type": kind, "id": entity_id}, approved, current, message)


def check_preconditions(
    preconditions: Iterable[Mapping[str, Any]], current: Callable[[str, str], object]
) -> WorldChanged | None:
    """The first precondition whose version ``current(type, id)`` does not give back exactly (as a
    string), as a ``WorldChanged`` to raise; None when every one holds (or there are none). Pure."""
    for precondition in preconditions:
        now = current(precondition["type"], precondition["id"])
        if now != precondition["version"]:
            return _moved(precondition, now if isinstance(now, str) else None)
    return None


def check_world(preconditions: Iterable[Mapping[str, Any]], read_version: ReadVersion) -> None:
    """Reads each precondition's target now with ``read_version(type, id)`` and raises
    ``WorldChanged`` (do not apply) unless each is still at the approved version.

    Example::

        verified = client.verify_step(decision, step)
        check_world(verified.preconditions, lambda kind, entity_id: freight.version_of(kind, entity_id))
    """
    preconditions = list(preconditions)
    readings: dict[tuple[str, str], object] = {}
    for precondition in preconditions:
        key = (precondition["type"], precondition["id"])
        try:
            readings[key] = read_version(*key)
        except Exception as error:  # noqa: BLE001 - any failure to read fails closed, saying why
            raise _moved(
                precondition,
                None,
                f"the current version of {key[0]} {key[1]} could not be read ({error}), so nobody can say it is "
                f"still as approved (version {precondition['version']}): do not apply; try again, or preview "
                "again and ask for approval again",
            ) from error
    moved = check_preconditions(preconditions, lambda kind, entity_id: readings.get((kind, entity_id)))
    if moved is not None:
        raise moved
