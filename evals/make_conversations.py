"""Write the conversational-memory eval set: memories of a small company's work over four years
and questions that name people, things and dates.

Deterministic (seeded): `python evals/make_conversations.py` rewrites
evals/data/memory_conversations.json (memories in the import format, `scoperag ingest memory`)
and evals/questions/memory_conversations.jsonl (the `scoperag eval` file). Each question names
the one memory it asks for by its tag; its `tags` say what the question names:

- name: an agreement with a company about one invoice, among many invoice memories;
- person: what one person said about a topic others also spoke about;
- month / day / year: a recurring meeting, outage or review, told apart only by its date
  (the date written as people write it: "March 2024", "14 June 2022", "in 2023");
- plain: a question in other words, naming nothing.

Written for this project, not drawn from any public benchmark.
"""

from __future__ import annotations

import calendar
import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MEMORIES = HERE / "data" / "memory_conversations.json"
QUESTIONS = HERE / "questions" / "memory_conversations.jsonl"

PEOPLE = [
    "Priya Natarajan",
    "Tomasz Wieczorek",
    "Amara Okafor",
    "Lukas Brandt",
    "Sofia Marchetti",
    "Kenji Watanabe",
    "Ingrid Solberg",
    "Mateo Alvarez",
    "Chloe Dubois",
    "Ravi Menon",
    "Hannah Kowalski",
    "Omar Haddad",
    "Elena Petrova",
    "Samuel Osei",
    "Yuki Tanaka",
    "Fatima Zahra",
    "Jonas Lindqvist",
    "Grace Mwangi",
    "Diego Ferreira",
    "Nadia Rahman",
]
COMPANIES = [
    "Acme",
    "Borealis Freight",
    "Kestrel Labs",
    "Juniper Foods",
    "Halcyon Media",
    "Quarry Systems",
    "Tidewater Bank",
    "Vantablack Studio",
    "Orchard Health",
    "Pinecrest Hotels",
    "Meridian Logistics",
    "Copperleaf Energy",
]
TERMS = [
    "paid in two instalments",
    "paid net 60 instead of net 30",
    "reissued with the VAT corrected",
    "written off after the dispute",
    "split across two cost centres",
    "paid in euros",
    "credited against the next order",
    "held until the audit closes",
]
TOPICS = [
    ("the onboarding docs", ["are too long", "need screenshots", "should start with a demo"]),
    ("the mobile app", ["crashes on login", "needs offline mode", "should drop Android 9"]),
    ("the pricing page", ["confuses people", "needs a yearly plan", "should show the VAT"]),
    ("the search feature", ["is slow on big projects", "misses typos", "needs filters"]),
]
PLANNING = [
    "move the launch a week later",
    "hire a second designer",
    "freeze the API for a quarter",
    "drop the desktop client",
    "run a customer survey",
    "rewrite the billing service",
    "open an office in Lisbon",
    "switch the CI to self-hosted runners",
    "cut the roadmap by a third",
    "start a bug bash every Friday",
    "add SSO for enterprise plans",
    "sunset the legacy importer",
]
SERVICES = ["payments API", "login service", "search cluster", "email relay"]
CAUSES = [
    "an expired certificate",
    "a full disk",
    "a bad config push",
    "a DNS change",
    "a memory leak",
    "a failed database failover",
    "a runaway cron job",
    "a cloud region outage",
]
THINGS = [
    "support contract",
    "licence renewal",
    "purchase order",
    "quote",
    "statement of work",
    "credit note",
    "expense report",
    "travel budget",
    "hardware order",
    "security review",
]
EVERYDAY = [
    "Sent {company} the {thing} for {number} seats.",
    "{person} asked {company} to sign the {thing} by {weekday}.",
    "Reminded {person} that the {thing} for {company} is due on {weekday}.",
    "{company} wants the {thing} split into {number} parts.",
    "Agreed with {person} at {company} to revisit the {thing} next quarter.",
    "{person} moved the {thing} call with {company} to {weekday}.",
    "Paid the {company} {thing} of {number} euros.",
    "{person} found a typo in the {thing} sent to {company}.",
    "Ticket {number}: {person} cannot open the {thing} from {company}.",
    "Lunch with {person} on {weekday}; talked about the {thing}.",
]
REVIEWS = ["growth was flat", "we doubled revenue", "churn fell by half", "we entered Germany"]
START, END = datetime(2022, 1, 1, tzinfo=UTC), datetime(2025, 12, 31, tzinfo=UTC)


def _moment(rng: random.Random, day: datetime) -> str:
    at = day.replace(hour=rng.randint(8, 18), minute=rng.choice([0, 15, 30, 45]))
    return at.isoformat().replace("+00:00", "Z")


def _random_day(rng: random.Random) -> datetime:
    return START + timedelta(days=rng.randrange((END - START).days))


def _day_text(rng: random.Random, day: datetime) -> str:
    month = calendar.month_name[day.month]
    forms = [
        f"{day.day} {month} {day.year}",
        f"{month} {day.day}, {day.year}",
        f"the {day.day}{_suffix(day.day)} of {month} {day.year}",
        day.date().isoformat(),
    ]
    return rng.choice(forms)


def _suffix(day: int) -> str:
    return "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")


def build(seed: int = 52) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The memories and the questions."""
    rng = random.Random(seed)
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    contents: set[str] = set()

    def memory(content: str, kind: str, day: datetime, tags: list[str]) -> str:
        tag = f"conv:{len(memories) + 1}"
        assert content not in contents, content  # the store keeps one memory per content
        contents.add(content)
        memories.append(
            {
                "content": content,
                "tags": [tag, *tags],
                "memory_type": kind,
                "created_at_iso": _moment(rng, day),
            }
        )
        return tag

    def ask(question: str, tag: str, names: str) -> None:
        questions.append({"question": question, "tag": tag, "names": names})

    # invoices: 120 agreements, a company and an invoice number each; 25 asked by name
    invoices = rng.sample(range(1000, 9999), 120)
    for n, number in enumerate(invoices):
        company, person = rng.choice(COMPANIES), rng.choice(PEOPLE)
        term = rng.choice(TERMS)
        tag = memory(
            f"Agreed with {person} at {company} that invoice {number} is {term}.",
            "decision",
            _random_day(rng),
            ["billing"],
        )
        if n % 5 == 0:
            forms = [
                f"What did we agree with {company} about invoice {number}?",
                f"What's the status of invoice {number}?",
                f"Anything from {company} on {number}?",
            ]
            ask(forms[n // 5 % 3], tag, "name")
    # people on topics: 80 opinions; 15 asked by person and topic
    said: set[tuple[str, str]] = set()
    opinions = [(p, t, v) for p in PEOPLE for t, views in TOPICS for v in views]
    for person, topic, view in rng.sample(opinions, 80):
        tag = memory(f"{person} said {topic} {view}.", "note", _random_day(rng), ["feedback"])
        first = person.split()[0]
        if (person, topic) not in said and len(said) < 15:
            ask(f"What does {first} think about {topic}?", tag, "person")
        said.add((person, topic))
    # a planning meeting each month: 48, 20 asked by month
    months = [(year, month) for year in range(2022, 2026) for month in range(1, 13)]
    asked_months = set(rng.sample(months, 20))
    chairs = rng.sample([(p, d) for p in PEOPLE for d in PLANNING], len(months))
    for (year, month), (person, decision) in zip(months, chairs, strict=True):
        day = datetime(year, month, rng.randint(3, 26), tzinfo=UTC)
        content = f"Monthly planning meeting led by {person}: we decided to {decision}."
        tag = memory(content, "decision", day, ["planning"])
        if (year, month) in asked_months:
            written = rng.choice([calendar.month_name[month], calendar.month_abbr[month]])
            ask(f"What did we decide at the planning meeting in {written} {year}?", tag, "month")
    # outages: 40 on given days, 15 asked by day
    outages = [(s, c, p) for s in SERVICES for c in CAUSES for p in PEOPLE]
    for n, (service, cause, person) in enumerate(rng.sample(outages, 40)):
        day = _random_day(rng)
        tag = memory(
            f"Outage of the {service}, caused by {cause}; {person} was on call.",
            "incident",
            day,
            ["incident"],
        )
        if n % 8 < 3:
            ask(f"What caused the {service} outage on {_day_text(rng, day)}?", tag, "day")
    # a yearly review each year: 4, all asked by year
    for year, outcome in zip(range(2022, 2026), rng.sample(REVIEWS, 4), strict=True):
        day = datetime(year, 12, rng.randint(10, 20), tzinfo=UTC)
        tag = memory(f"Annual review: {outcome}.", "decision", day, ["review"])
        ask(f"What came out of the annual review in {year}?", tag, "year")
    # everyday notes around them: 1,200, none asked for
    while sum("everyday" in m["tags"] for m in memories) < 1200:
        template = rng.choice(EVERYDAY)
        content = template.format(
            person=rng.choice(PEOPLE),
            company=rng.choice(COMPANIES),
            number=rng.randint(10, 9999),
            thing=rng.choice(THINGS),
            weekday=rng.choice(list(calendar.day_name)),
        )
        if content not in contents:
            memory(content, "note", _random_day(rng), ["everyday"])
    # plain questions, in other words than the memory's
    plain = [
        ("Our cat Biscuit hates the office vacuum cleaner.", "Which pet is scared of cleaning?"),
        ("The team lunch place of choice is the ramen bar on Dock Street.", "Where do we eat?"),
        ("Backups of the main database run at 02:00 UTC every night.", "When is data saved?"),
        ("The staging server is wiped clean every Sunday night.", "When is the test box reset?"),
        ("We use Figma for all design mock-ups.", "Which tool do designers draw in?"),
        ("Plants are watered by whoever is in first on Monday.", "Who minds the plants?"),
    ]
    for content, question in plain:
        ask(question, memory(content, "note", _random_day(rng), ["office"]), "plain")
    return memories, questions


def main() -> None:
    memories, questions = build()
    MEMORIES.write_text(json.dumps({"memories": memories}, indent=1) + "\n", encoding="utf-8")
    with QUESTIONS.open("w", encoding="utf-8") as out:
        for n, item in enumerate(questions, 1):
            line = {
                "id": f"{item['names']}-{n}",
                "tool": "search",
                "arguments": {"query": item["question"], "page_size": 5},
                "relevant": [{"tags": item["tag"]}],
                "tags": [item["names"]],
            }
            out.write(json.dumps(line) + "\n")
    print(f"wrote {len(memories)} memories to {MEMORIES} and {len(questions)} questions")


if __name__ == "__main__":
    main()
