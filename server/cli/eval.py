"""`scoperag eval QUESTIONS.jsonl [--k 5] [--json]`: score retrieval on a user's own questions
(the question format: `scoperag.server.evaluation`; the same function as `Store.evaluate`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from scoperag.server.cli.support import load_settings, run_friendly


def _figures_line(figures: dict[str, Any], k: int) -> str:
    line = (
        f"{figures['tool']:<26} {figures['questions']:>4} questions  hit@{k} "
        f"{figures['hit_rate']:.3f}  recall@{k} {figures['recall']:.3f}  MRR {figures['mrr']:.3f}"
    )
    if figures["negatives"]:
        line += f"  false positives {figures['false_positives']}/{figures['negatives']}"
    if figures["sentences_past_position"] is not None:
        line += f"  sentences past position {figures['sentences_past_position']}"
    return line


def print_report(report: dict[str, Any]) -> None:
    """Figures per tool and overall, then the questions that missed."""
    k = report["k"]
    for figures in [*report["tools"], report["overall"]]:
        click.echo(_figures_line(figures, k))
    if report["missed"]:
        click.echo(f"missed ({len(report['missed'])}):")
    for item in report["missed"]:
        name = item["id"] or f"line {item['line']}"
        click.echo(f"  {name} [{item['tool']}, {item['hits']} hits]: {item['query']}")


def _misses(session: Any, runtime: Any, report: Any, questions: Path) -> list[Any]:
    """Why each missed question missed (`scoperag.server.eval_explain`)."""
    from scoperag.server.eval_explain import explain_misses

    def properties(tool: str) -> dict[str, Any]:
        return session.tools[tool].parameters.get("properties", {})

    return run_friendly(
        lambda: explain_misses(session.call, properties, runtime.backend, report, questions)
    )


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `scoperag eval`."""

    @cli.command("eval")
    @click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--k", default=5, show_default=True, type=click.IntRange(min=1))
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    @click.option(
        "--explain",
        is_flag=True,
        help="For each missed question: where each relevant item ranked in the dense and the "
        "BM25 branch, and which stage (floor, filter, gate, limit) dropped it.",
    )
    def eval_command(questions: Path, k: int, as_json: bool, explain: bool) -> None:
        """Ask each question of a JSONL file through its tool and print hit@k, recall@k and MRR
        per tool and overall, and the questions that missed. A line: {"tool": "qdrant-find",
        "arguments": {"query": "...", "document_id": "x"}, "relevant": [{"physical_page_index":
        5}]} (a hit is relevant when its payload has those values)."""
        from scoperag.server.evaluation import evaluate
        from scoperag.server.mcp.app import build_server
        from scoperag.server.python_api.session import ToolSession
        from scoperag.server.runtime import Runtime

        runtime = Runtime(load_settings())
        try:
            session = ToolSession(build_server(runtime), progress=False)
            try:
                report = run_friendly(lambda: evaluate(session.call, questions, k))
                misses = _misses(session, runtime, report, questions) if explain else None
            finally:
                session.close()
        finally:
            runtime.close()
        data = report.model_dump(mode="json")
        if misses is not None:
            data["why"] = [miss.model_dump(mode="json") for miss in misses]
        if as_json:
            click.echo(json.dumps(data, indent=2))
        else:
            print_report(data)
            if misses:
                from scoperag.server.eval_explain import render_misses

                click.echo(render_misses(misses))
