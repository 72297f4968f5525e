"""Write a realistic docs JSONL for the docs profile: `scoperag ingest docs FILE.jsonl`.

Documents of a fictional engineering org: runbooks, design docs, incident reports, meeting notes,
decision records, API references and onboarding guides about a dozen services, owned by agents
in several time zones, spread over two years of updates, in every scope and status. The same
seed always gives the same file.

    python evals/make_docs_fixture.py --count 3000 --seed 7 --out /tmp/docs.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import TextIO

END = datetime(2026, 11, 1, tzinfo=UTC)
SPAN = timedelta(days=730)  # two years of updates
SCOPES = {"agent_private": 3, "project_shared": 5, "org_shared": 2}
STATUSES = {"active": 13, "draft": 3, "archived": 3, "superseded": 1}
# agent id -> its UTC offset in hours (timestamps are written in the agent's own zone)
AGENTS = {
    "agent-atlas": 0,
    "agent-borealis": 2,
    "agent-cinder": -5,
    "agent-delta": 5.5,
    "agent-ember": 9,
    "agent-fjord": 1,
    "agent-gale": -8,
    "agent-harbor": 10,
}
SERVICES = {
    "billing-service": ("invoices", "Stripe webhooks", "proration"),
    "auth-gateway": ("OAuth tokens", "session cookies", "rate limits"),
    "search-indexer": ("Qdrant collections", "reindex jobs", "embedding drift"),
    "notification-hub": ("push delivery", "email templates", "retry queues"),
    "data-pipeline": ("nightly ETL", "Parquet partitions", "late-arriving events"),
    "mobile-app": ("release trains", "crash reports", "feature flags"),
    "payments-ledger": ("double-entry postings", "reconciliation", "currency rounding"),
    "inventory-api": ("stock reservations", "warehouse sync", "cache invalidation"),
    "ml-platform": ("GPU scheduling", "model registry", "offline evaluation"),
    "observability": ("Prometheus alerts", "trace sampling", "log retention"),
    "customer-portal": ("SSO login", "accessibility audit", "page load budget"),
    "kafka-cluster": ("partition rebalancing", "consumer lag", "broker upgrades"),
}
_REVS = (0, 0, 0, 1, 2, 4, 8, 16)  # how many revision notes a document has, drawn uniformly
PEOPLE = ("Priya", "Tomás", "Mei", "Olu", "Sven", "Aisha", "Kenji", "Lucía", "Noah", "Ines")

PARAGRAPHS = {
    "runbook": (
        "This runbook covers {service} when {topic} misbehave. Start by checking the "
        "{service} dashboard for error-rate spikes and confirm the last deploy in the release log.",
        "If {topic2} are backing up, drain the worker pool with `kubectl scale deploy/{service} "
        "--replicas=0`, wait for in-flight jobs to finish, then scale back to the usual {n} "
        "replicas.",
        "Escalate to the on-call owner of {service} after {n} minutes without recovery. Record "
        "the timeline in the incident channel so the postmortem has exact timestamps.",
        "Known pitfall: {topic3} can hide the real failure. Look at the upstream latency "
        "histogram before restarting anything.",
    ),
    "design_doc": (
        "Problem: {service} handles {topic} with a design that no longer fits {n}x today's load. "
        "This document proposes a replacement and lists the alternatives we rejected.",
        "Proposal: move {topic2} behind an idempotent queue, shard by tenant, and keep the hot "
        "path free of synchronous calls to other services.",
        "Alternatives considered: a bigger database instance (buys {n} months), and a full "
        "rewrite in a new language (too risky for the team size).",
        "Open questions: how {topic3} interacts with the migration window, and who owns the "
        "backfill. {person} will prototype the sharding key next sprint.",
    ),
    "incident_report": (
        "Summary: for {n} minutes {service} returned errors to a share of users because "
        "{topic} stopped being processed. No data was lost.",
        "Timeline: the alert fired, {person} acknowledged it, traffic was shifted away, and the "
        "root cause was found in a configuration change to {topic2}.",
        "Root cause: a default changed in a library upgrade, so {topic3} used the wrong timeout. "
        "Tests did not cover the new default.",
        "Action items: add a regression test, alert on {topic2} saturation, and document the "
        "setting in the {service} runbook.",
    ),
    "meeting_notes": (
        "Attendees: {person}, {person2} and the {service} team. Agenda: {topic}, the next "
        "milestone, and hiring.",
        "Decisions: we keep {topic2} as is until the quarter ends; {person2} owns the follow-up "
        "on {topic3}.",
        "Discussion: the team estimated {n} days for the migration; risk is mostly in testing "
        "against production-like data.",
        "Next meeting in two weeks. Bring numbers on error budgets for {service}.",
    ),
    "decision_record": (
        "Context: {service} needs a consistent approach to {topic}. Several teams solved it "
        "differently and incidents followed.",
        "Decision: all new code for {topic2} goes through the shared client library, version "
        "{n}.x, and the old helpers are deprecated.",
        "Consequences: one place to fix bugs in {topic3}; a migration cost for three services; "
        "{person} tracks the deprecation.",
    ),
    "api_reference": (
        "`GET /v{n}/{service}/status` returns the health of {topic} as JSON with fields `state`, "
        "`updated_at` and `details`.",
        "`POST /v{n}/{service}/jobs` enqueues work on {topic2}; the body needs an idempotency "
        "key, and retries with the same key are safe.",
        "Errors: 400 names the invalid field, 409 means a job with that key already runs, and "
        "429 asks you to back off (see {topic3}).",
    ),
    "onboarding_guide": (
        "Welcome to the {service} team! Your first week: get access, run the service locally, "
        "and shadow {person} on call.",
        "Local setup: clone the repository, run `make dev`, and seed test data for {topic}. "
        "Ask in the team channel if {topic2} fails to start.",
        "Reading list: the {service} design docs, the last {n} incident reports, and the "
        "decision record on {topic3}.",
    ),
}
REVISIONS = (
    "Revision {k}: {person} rewrote the part on {topic} after the load test showed {n}% headroom.",
    "Revision {k}: clarified who is paged for {topic2}; the escalation window is now {n} minutes.",
    "Revision {k}: added a link to the dashboard for {topic3} and removed outdated screenshots.",
    "Revision {k}: {person2} checked every command against the current {service} deployment.",
    "Revision {k}: noted that {topic} behaves differently in the staging region.",
)
TITLES = {
    "runbook": "Runbook: {service} {topic}",
    "design_doc": "Design: rethinking {topic} in {service}",
    "incident_report": "Incident: {service} {topic} outage",
    "meeting_notes": "{service} sync: {topic}",
    "decision_record": "ADR: {topic} in {service}",
    "api_reference": "{service} API reference ({topic})",
    "onboarding_guide": "Onboarding to {service}",
}


def _weighted(rng: random.Random, weights: dict[str, int]) -> str:
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def rfc3339(moment: datetime, offset_hours: float, with_fraction: bool) -> str:
    """`moment` written in a zone `offset_hours` from UTC (Z for UTC), RFC3339."""
    local = moment.astimezone(timezone(timedelta(hours=offset_hours)))
    text = local.isoformat(timespec="milliseconds" if with_fraction else "seconds")
    return text.replace("+00:00", "Z")


def document(rng: random.Random, number: int) -> dict[str, str]:
    """One document as a JSONL line's object."""
    doc_type = rng.choice(list(PARAGRAPHS))
    service = rng.choice(list(SERVICES))
    topics = rng.sample(SERVICES[service], 3)
    people = rng.sample(PEOPLE, 2)
    values = {
        "service": service,
        "topic": topics[0],
        "topic2": topics[1],
        "topic3": topics[2],
        "person": people[0],
        "person2": people[1],
    }
    opening, *rest = PARAGRAPHS[doc_type]
    rng.shuffle(rest)
    kept = [opening, *rest[: rng.randint(1, len(rest))]]
    kept += [rng.choice(REVISIONS).replace("{k}", str(k + 1)) for k in range(rng.choice(_REVS))]
    text = "\n\n".join(p.format(n=rng.randint(2, 40), **values) for p in kept)
    agent = rng.choice(list(AGENTS))
    moment = END - SPAN * rng.random()
    return {
        "doc_id": f"{doc_type.replace('_', '-')}-{service}-{number:05d}",
        "title": TITLES[doc_type].format(**values),
        "text": text,
        "scope": _weighted(rng, SCOPES),
        "status": _weighted(rng, STATUSES),
        "doc_type": doc_type,
        "agent_id": agent,
        "updated_at": rfc3339(moment.replace(microsecond=0), AGENTS[agent], rng.random() < 0.2),
    }


def generate(count: int, seed: int) -> Iterator[dict[str, str]]:
    """`count` documents; the same seed gives the same documents."""
    rng = random.Random(seed)
    for number in range(count):
        yield document(rng, number)


def write_jsonl(out: TextIO, count: int, seed: int) -> None:
    for doc in generate(count, seed):
        out.write(json.dumps(doc, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=3000, help="Documents to write.")
    parser.add_argument("--seed", type=int, default=7, help="Random seed (same seed, same file).")
    parser.add_argument("--out", type=Path, default=None, help="Output file (default: stdout).")
    args = parser.parse_args()
    if args.out is None:
        write_jsonl(sys.stdout, args.count, args.seed)
        return
    with args.out.open("w", encoding="utf-8") as out:
        write_jsonl(out, args.count, args.seed)
    print(f"wrote {args.count} documents to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
