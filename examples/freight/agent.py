"""A sample freight agent in Python, the twin of agent.ts: submits the plan for ticket #74991 to
Countersign over HTTP, waits for people to decide in Slack, and executes what was approved — each
step verified against Countersign's signed decision right before its effect — the target each step
was approved against read again from the freight systems (here the example dataset's versions), so a
step whose delivery or invoice changed since approval is refused (``world_changed``) — and claimed
with ``report_outcome(..., "applying")`` so it never runs twice. It holds its secret, which only signs
its requests, and no Redis credentials.

    COUNTERSIGN_URL=http://127.0.0.1:3000 FREIGHT_AGENT_SECRET=… python3 examples/freight/agent.py
    … python3 examples/freight/agent.py --change-world   a dispatcher moves the delivery after approval

Importing this file does nothing; ``run_freight_agent`` is what ``main`` (and the tests) call.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

try:
    import countersign  # noqa: F401 - only: is the package importable?
except ImportError:  # run from a checkout without installing the package: use clients/python
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "clients" / "python"))

from countersign import (
    AlreadyClaimed,
    Client,
    Decision,
    DecisionTimeout,
    InvalidPlan,
    NotApproved,
    RequestError,
    VerificationError,
    WorldChanged,
)

FREIGHT_AGENT = "freight-ops"

# The plan the agent proposes (as examples/freight/plans.ts): a note, a reschedule, a reply.
FREIGHT_PLAN: dict[str, Any] = {
    "summary": "Ticket #74991: missed pallet delivery. Rebook it and tell the customer.",
    "context": {"ticket_id": "74991", "customer": "Marta Lind", "account": "Nordvik Logistics"},
    "steps": [
        {
            "id": "s1",
            "tool": "add_note",
            "args": {
                "ticket_id": "74991",
                "note": "Customer reports the pallet delivery on 2 April was missed; driver logged no attempt.",
            },
        },
        {"id": "s2", "tool": "reschedule_delivery", "args": {"delivery_id": "dl_55120", "window": "2026-04-03"}},
        {
            "id": "s3",
            "tool": "send_reply",
            "args": {
                "ticket_id": "74991",
                "body": "Hi Marta, sorry about the missed delivery. We have rebooked it for Friday 3 April, "
                "before noon.",
            },
        },
    ],
    "expiresIn": "2h",
}


# The freight systems' versions as this agent reads them: each entity's change counter, as in the
# example dataset (examples/freight/data.ts), which the tools' previews read when people approve.
FREIGHT_VERSIONS: dict[tuple[str, str], str] = {
    ("delivery", "dl_55120"): "7",
    ("invoice", "in_74119"): "3",
    ("invoice", "in_74120"): "5",
    ("invoice", "in_74121"): "2",
}


def read_version(kind: str, entity_id: str) -> str | None:
    """An entity's version now, right before an effect (None: there is no such entity)."""
    return FREIGHT_VERSIONS.get((kind, entity_id))


def move_delivery_after_approval() -> str:
    """A dispatcher moves delivery dl_55120 in the freight system after the plan was approved: the
    world the approvers saw is gone, and the reschedule must be refused. Returns the line to print."""
    key = ("delivery", "dl_55120")
    before = FREIGHT_VERSIONS[key]
    FREIGHT_VERSIONS[key] = str(int(before) + 1)
    return (f"a dispatcher moved delivery dl_55120 to 2026-04-07 after the approval "
            f"(version {before} → {FREIGHT_VERSIONS[key]})")


def execute(step: dict[str, Any], log: Callable[[str], None]) -> None:
    """The executor's side of each tool. Here it prints; a real agent calls the freight systems."""
    log(f"    → {step['tool']}({json.dumps(step['args'], ensure_ascii=False, separators=(',', ':'))})")


def run_freight_agent(
    client: Client,
    log: Callable[[str], None] = print,
    timeout: float = 3600.0,
    after_approval: Callable[[Decision], None] | None = None,
) -> tuple[Decision, list[str]]:
    """Submits the freight plan, awaits the decision and executes the approved steps. Returns the
    decision and the ids of the steps executed. A plan Countersign refuses raises ``InvalidPlan``.
    ``after_approval`` is called with an approved decision before anything runs (``--change-world``
    changes the world there)."""
    submitted = client.submit(FREIGHT_PLAN)
    run_id = submitted.run_id
    if submitted.status == "approved":
        log(f"submitted run {run_id}; approved by policy")
    else:
        log(f"submitted run {run_id}; waiting for a decision in Slack…")

    decision = client.wait_for_decision(run_id, timeout=timeout)
    by = f" by {decision['decidedBy']}" if decision["decidedBy"] else ""
    log(f"decision: {decision['status']}{by}")
    if decision["status"] != "approved" or decision["plan"] is None:
        if decision["reason"]:
            log(f"  reason: {decision['reason']}")
        for diagnostic in decision["diagnostics"]:
            log(f"  {diagnostic['code']}: {diagnostic['message']}")
        return decision, []

    if after_approval is not None:
        after_approval(decision)
    executed: list[str] = []
    # The approved plan, which may differ from what was submitted: people can edit it.
    for step in decision["plan"]["steps"]:
        try:
            # Right before the effect: the receipt, the step, its dependencies, and the world it was approved in.
            client.verify_step(decision, step, read_version=read_version)
        except VerificationError as refused:
            log(f"  ✗ {step['id']}: not executing ({refused.reason}: {refused.message})")
            if isinstance(refused, WorldChanged):
                log("    submit the plan again so people approve the world as it is now")
            break  # later steps may depend on this one
        try:
            client.report_outcome(run_id, step["id"], "applying")
        except (AlreadyClaimed, NotApproved) as refused:
            # Claimed before (a second run of this agent), or no longer approved: never run twice.
            log(f"  ↷ {step['id']}: {refused.message}")
            continue
        log(f"  ✓ {step['id']} verified (digest {step['digest'][:12]}…), executing")
        try:
            execute(step, log)
        except Exception as error:  # noqa: BLE001 - any failure of the effect is reported, then re-raised
            client.report_outcome(run_id, step["id"], "failed", detail=str(error))
            log(f"  ✗ {step['id']} failed: {error}")
            raise
        client.report_outcome(run_id, step["id"], "applied")
        executed.append(step["id"])
    return decision, executed


def main() -> int:
    secret = os.environ.get("FREIGHT_AGENT_SECRET")
    if not secret:
        print("set FREIGHT_AGENT_SECRET to the freight-ops agent's secret (as in the Countersign config)",
              file=sys.stderr)
        return 2
    client = Client(os.environ.get("COUNTERSIGN_URL", "http://127.0.0.1:3000"), FREIGHT_AGENT, secret)
    change_world = "--change-world" in sys.argv[1:]
    try:
        run_freight_agent(
            client,
            log=lambda line: print(line, flush=True),
            after_approval=(lambda _decision: print(move_delivery_after_approval(), flush=True))
            if change_world
            else None,
        )
    except (InvalidPlan, DecisionTimeout, RequestError) as error:
        # Refused, undecided in time, or Countersign unreachable: say so; anything else is a bug.
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
