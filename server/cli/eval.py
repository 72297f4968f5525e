"""`scoperag eval QUESTIONS.jsonl [--k 5] [--json] [--run FILE] [--qrels FILE] [--compare P=V |
--against DATA_DIR]`: score retrieval on a user's own questions (the question format:
`scoperag.server.evaluation`; the same function as `Store.evaluate` and `Store.compare`; the
run, qrels and comparison: `eval_output`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from scoperag.server.cli.support import load_settings


def _figures_line(figures: dict[str, Any], k: int) -> str:
    line = (
        f"{figures['tool']:<26} {figures['questions']:>4} questions  hit@{k} "
        f"{figures['hit_rate']:.3f}  recall@{k} {figures['recall']:.3f}  MRR {figures['mrr']:.3f}"
        f"  nDCG@{k} {figures['ndcg']:.3f}"
    )
    if figures["negatives"]:
        line += f"  false positives {figures['false_positives']}/{figures['negatives']}"
    if figures["sentences_past_position"] is not None:
        line += f"  sentences past position {figures['sentences_past_position']}"
    return line


SHOWN = 10  # values not in the store, and lines of each, printed (--json has every one)


def _lines(lines: list[int]) -> str:
    shown = ", ".join(map(str, lines[:SHOWN]))
    more = f", ... ({len(lines)} lines)" if len(lines) > SHOWN else ""
    return f"line {shown}" if len(lines) == 1 else f"lines {shown}{more}"


def print_report(report: dict[str, Any]) -> None:
    """Figures per tool and overall, the questions that missed, the lines not scored and the
    values asked for that the store does not hold."""
    k = report["k"]
    for figures in [*report["tools"], *report["tags"], report["overall"]]:
        click.echo(_figures_line(figures, k))
    if report["missed"]:
        click.echo(f"missed ({len(report['missed'])}):")
    for item in report["missed"]:
        name = item["id"] or f"line {item['line']}"
        click.echo(f"  {name} [{item['tool']}, {item['hits']} hits]: {item['query']}")
    if report["problems"]:
        click.echo(f"not scored ({len(report['problems'])}):")
    for problem in report["problems"]:
        click.echo(f"  line {problem['line']}, {problem['field']}: {problem['message']}")
    gaps = report["missing"]
    if gaps:
        click.echo(
            f"not in the store ({len(gaps)}; ingest them first, `scoperag list` shows what "
            "the store holds):"
        )
    for gap in gaps[:SHOWN]:
        what = f"{gap['key']} {json.dumps(gap['value'])}" if gap["key"] else gap["value"]
        click.echo(f"  {what}: {gap['tool']}, {_lines(gap['lines'])}")
    if len(gaps) > SHOWN:
        click.echo(f"  and {len(gaps) - SHOWN} more (--json lists them all)")


def print_comparison(base: dict[str, Any], other: dict[str, Any], change: str) -> None:
    """Both reports' figures side by side, then the questions whose outcome changed."""
    k = base["k"]
    click.echo(f"compared: as asked → {change}")
    heads = [f"hit@{k}", f"recall@{k}", "MRR", f"nDCG@{k}"]
    click.echo(f"{'tool':<26} " + " ".join(f"{head:>15}" for head in heads))
    after = {f["tool"]: f for f in [*other["tools"], *other["tags"], other["overall"]]}
    for figures in [*base["tools"], *base["tags"], base["overall"]]:
        new = after.get(figures["tool"], figures)
        keys = ("hit_rate", "recall", "mrr", "ndcg")
        cells = [f"{figures[key]:.3f} → {new[key]:.3f}" for key in keys]
        click.echo(f"{figures['tool']:<26} " + " ".join(f"{cell:>15}" for cell in cells))
    for test in other["significance"]:
        click.echo(
            f"  {test['metric']:<7} mean difference {test['mean_difference']:+.3f} over "
            f"{test['questions']} questions, p = {test['p_value']:.4f} ({test['method']})"
        )
    changed = other["changed"]
    click.echo(f"changed ({len(changed)}):")
    for item in changed:
        name = item["id"] or f"line {item['line']}"
        was, now = item["before"], item["after"]
        click.echo(
            f"  {name}: hit {was['hit']:g} → {now['hit']:g}, rank {was['rank'] or '-'} → "
            f"{now['rank'] or '-'}: {item['query']}"
        )


def _misses(session: Any, runtime: Any, report: Any, questions: Path) -> list[Any]:
    """Why each missed question missed (`scoperag.server.eval_explain`)."""
    from scoperag.server.eval_explain import explain_misses

    def properties(tool: str) -> dict[str, Any]:
        return session.tools[tool].parameters.get("properties", {})

    return explain_misses(session.call, properties, runtime.backend, report, questions)


def _evaluate_in(data_dir: Path, questions: Path, k: int) -> Any:
    """The question file scored on the store of another data dir (same other settings)."""
    from scoperag.server.evaluation import evaluate
    from scoperag.server.mcp.app import build_server
    from scoperag.server.runtime import Runtime
    from scoperag.server.tool_session import ToolSession

    runtime = Runtime(load_settings(data_dir=data_dir))
    try:
        session = ToolSession(build_server(runtime), progress=False)
        try:
            return evaluate(session.call, questions, k)
        finally:
            session.close()
    finally:
        runtime.close()


def register(cli: click.Group, ingest: click.Group) -> None:
    """Add `scoperag eval`."""

    @cli.command("eval")
    @click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--k", default=5, show_default=True, type=click.IntRange(min=1))
    @click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
    @click.option(
        "--run",
        "run_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write a TREC run file (qid Q0 docid rank score tag) for trec_eval, ranx, ...",
    )
    @click.option(
        "--qrels",
        "qrels_file",
        type=click.Path(dir_okay=False, path_type=Path),
        help="Write the matching TREC qrels (qid 0 docid 1).",
    )
    @click.option(
        "--compare",
        metavar="PARAM=VALUE",
        help="Score the file again with one argument changed (e.g. min_similarity=-1) and "
        "print both side by side with the questions that changed.",
    )
    @click.option(
        "--against",
        type=click.Path(exists=True, file_okay=False, path_type=Path),
        help="Score the file again on the store of another data dir (e.g. built with another "
        "chunking) and print both side by side with the questions that changed.",
    )
    @click.option(
        "--explain",
        is_flag=True,
        help="For each missed question: where each relevant item ranked in the dense and the "
        "BM25 branch, and which stage (floor, filter, gate, limit) dropped it.",
    )
    def eval_command(
        questions: Path,
        k: int,
        as_json: bool,
        run_file: Path | None,
        qrels_file: Path | None,
        compare: str | None,
        against: Path | None,
        explain: bool,
    ) -> None:
        """Ask each question of a JSONL file through its tool and print hit@k, recall@k and MRR
        per tool and overall, and the questions that missed. A line: {"tool": "qdrant-find",
        "arguments": {"query": "...", "document_id": "x"}, "relevant": [{"page_label":
        "5"}]} (a hit is relevant when its payload has those values). A malformed line is
        reported with its number and field; the others still run."""
        from scoperag.server import eval_output
        from scoperag.server.eval_output import compare as compare_reports
        from scoperag.server.evaluation import evaluate
        from scoperag.server.mcp.app import build_server
        from scoperag.server.runtime import Runtime
        from scoperag.server.tool_session import ToolSession

        if compare and against:
            raise click.UsageError("give --compare or --against, not both")
        runtime = Runtime(load_settings())
        try:
            session = ToolSession(build_server(runtime), progress=False)
            try:
                stored = eval_output.StoreContents(runtime)
                report = evaluate(session.call, questions, k, stored)
                other = None
                if compare:
                    used = {item.tool for item in report.scores}
                    schemas = {n: t.parameters for n, t in session.tools.items() if n in used}
                    changed, _, _ = eval_output.changed_call(session.call, schemas, compare)
                    other = evaluate(changed, questions, k)
                if against:
                    other = _evaluate_in(against, questions, k)
                misses = _misses(session, runtime, report, questions) if explain else None
            finally:
                session.close()
        finally:
            runtime.close()
        if run_file:
            eval_output.write_lines(run_file, eval_output.run_lines(report, "scoperag"))
        if qrels_file:
            eval_output.write_lines(qrels_file, eval_output.qrels_lines(report))
        data = report.model_dump(mode="json")
        if misses is not None:
            data["why"] = [miss.model_dump(mode="json") for miss in misses]
        change = compare or (f"the store in {against}" if against else None)
        if other is not None:
            both = compare_reports(report, other).model_dump(mode="json")
            compared = {**both["other"], "changed": both["changed"]}
            compared["significance"] = both["significance"]
            data = {**data, "compare": {"change": change, **compared}}
        if as_json:
            click.echo(json.dumps(data, indent=2))
            return
        print_report(data)
        if misses:
            from scoperag.server.eval_explain import render_misses

            click.echo(render_misses(misses))
        if other is not None:
            print_comparison(data, data["compare"], str(change))
