"""Write the project's quality evals as `scoperag eval` question files (evals/questions/*.jsonl).

- pdf_known_pages.jsonl: evals/data/pdf_known_pages.json, one `qdrant-find` (limit 5) a
  question, relevant = the page that answers it (run with `--k 5`: hit@5);
- dnd_names.jsonl: evals/data/dnd_name_queries.json, one lookup (limit 3) a typed name,
  relevant = the intended name (run with `--k 1`: top-1 accuracy);
- memory_devbench.jsonl: the devbench queries of ../shared/data/memories, one `search`
  (page_size 5) a question, relevant = its expected tags; negatives expect nothing
  (memory_devbench_floor_0.jsonl: the same with min_similarity 0, cosine).

    python evals/make_questions.py
    scoperag eval evals/questions/pdf_known_pages.jsonl    # on a store holding ../shared/data/pdf
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

EVALS = Path(__file__).resolve().parent
OUT = EVALS / "questions"
# ../shared/data beside the repository, or beside the folder of worktrees
SHARED = next((p / "shared" / "data" for p in EVALS.parents[1:3] if (p / "shared").is_dir()), None)
DEVBENCH = (SHARED or EVALS) / "memories" / "devbench_dataset.json"


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def pdf_known_pages() -> list[dict[str, Any]]:
    questions = []
    for number, case in enumerate(_read(EVALS / "data" / "pdf_known_pages.json"), 1):
        typed = "".join(ch if ch.isprintable() else " " for ch in case["question"])
        questions.append(
            {
                "id": f"{case['kind']}-{number}",
                "tool": "qdrant-find",
                "arguments": {"query": typed, "limit": 5},
                "relevant": [
                    {"document_id": case["document_id"], "physical_page_index": case["page"]}
                ],
            }
        )
    return questions


def dnd_names() -> list[dict[str, Any]]:
    return [
        {
            "id": f"{case['slip']}: {case['name']}",
            "tool": case["tool"],
            "arguments": {"name": case["query"], "limit": 3},
            "relevant": [{"name": case["name"]}],
        }
        for case in _read(EVALS / "data" / "dnd_name_queries.json")
    ]


def memory_devbench(floor: float | None = None) -> list[dict[str, Any]]:
    given = {} if floor is None else {"min_similarity": floor}
    return [
        {
            "id": f"{query['category']}: {query['id']}",
            "tool": "search",
            "arguments": {"query": query["question"], "page_size": 5, **given},
            "relevant": [{"tags": tag} for tag in query["expected_tags"]],
        }
        for query in _read(DEVBENCH)["queries"]
    ]


def main() -> None:
    OUT.mkdir(exist_ok=True)
    files = {
        "pdf_known_pages": pdf_known_pages(),
        "dnd_names": dnd_names(),
        "memory_devbench": memory_devbench(),
        "memory_devbench_floor_0": memory_devbench(0.0),
    }
    for name, questions in files.items():
        path = OUT / f"{name}.jsonl"
        lines = [json.dumps(q, ensure_ascii=False) + "\n" for q in questions]
        path.write_text("".join(lines), encoding="utf-8")
        print(f"wrote {len(questions)} questions to {path}")


if __name__ == "__main__":
    main()
