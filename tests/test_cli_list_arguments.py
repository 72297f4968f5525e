"""List arguments typed on the command line are read as every surface reads them
(`scoperag.core.filters.params.as_list`): `tags=ops,backup` is two tags, and the searches that
take tags find them by either one, through the real `scoperag` CLI."""

from __future__ import annotations

import json

from click.testing import CliRunner

from scoperag.core.filters.params import as_list
from scoperag.server.cli.main import cli


def _json(runner: CliRunner, *args: str) -> dict:
    result = runner.invoke(cli, [*args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_comma_separated_tags_are_two_tags_on_every_command(
    cli_with_shared_model: CliRunner,
) -> None:
    """`scoperag call store_memory tags=ops,backup` stored the one tag "ops,backup", so
    `search memory --tags ops,deploy` and `memory duplicates --tags a,b` found nothing."""
    runner = cli_with_shared_model
    content = "Nightly backups of the ops database run at 02:00 UTC."
    stored = _json(
        runner, "call", "store_memory", f"content={content}", "tags=ops,backup", "--json"
    )
    assert stored["stored"] is True
    _json(runner, "call", "store_memory", f"content={content} Again.", "tags=backup", "--json")

    found = _json(runner, "search", "memory", "--mode", "tag", "--tags", "ops,deploy", "--json")
    assert found["memories"], "the search found nothing"
    tags = {row["content_hash"]: row["tags"] for row in found["memories"]}
    assert tags[stored["content_hash"]] == ["ops", "backup"]

    both = ["--mode", "tag", "--tags", "ops,backup", "--match-all", "true", "--json"]
    every = _json(runner, "search", "memory", *both)
    assert [row["content_hash"] for row in every["memories"]] == [stored["content_hash"]]

    groups = _json(runner, "memory", "duplicates", "--tags", "backup,elsewhere", "--json")
    assert groups["groups"], "find_duplicates found no group among the tagged memories"
    members = {m["content_hash"] for group in groups["groups"] for m in group["members"]}
    assert stored["content_hash"] in members


def test_as_list_reads_every_text_form_of_a_list() -> None:
    assert as_list('["a", "b"]') == ["a", "b"]
    assert as_list("a, b,,c ") == ["a", "b", "c"]
    assert as_list(["a,b", "c"]) == ["a", "b", "c"]
    assert as_list("a,b", split=False) == ["a,b"]
    assert as_list("  ") is None and as_list([]) == [] and as_list(None) is None
    assert as_list(5) == 5  # not a list: the declared type refuses it
