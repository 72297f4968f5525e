"""What one profile is, declared once in its own module: the server, the CLI, the data
commands, the demo and the Python API read it.

A declaration names modules rather than importing them, so reading every profile's stays as
light as `scoperag --help` needs; each named module is imported only when it is used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from scoperag.core.config.settings import Settings
from scoperag.server.results.shape import HitShape


class DeleteTarget(NamedTuple):
    """What `scoperag delete KIND NAME` removes: the points whose payload `key` equals NAME
    (or, with `by_prefix`, starts with it, where exactly one stored value does). `deleter`
    ("module:function") deletes it the profile's own way instead: called with the backend, the
    data dir, the stored id and `whole_line`, it returns how many points went."""

    key: str
    what: str  # how messages name the thing removed, e.g. "PDF document"
    by_prefix: bool = False
    deleter: str = ""


class SearchTool(NamedTuple):
    """The Python method a profile's LlamaIndex retriever searches with, and its top-k
    parameter."""

    method: str
    top_k: str


class Sample(NamedTuple):
    """A bundled sample (a file or folder in `server/samples`; "" is the folder itself) and
    the command that ingests it (`{path}` is its path)."""

    path: str
    command: str


@dataclass(frozen=True)
class Profile:
    """One profile: its names, its collection, and the modules and tables built from them.

    The collection and its payload indexes are the profile's contract
    (found by `scoperag.core.contracts`); its pipeline is what its ingest tool and ingest
    command run.
    """

    name: str
    order: int  # where it stands in tools/list, help and listings (lowest first)
    instructions: str  # its sentence in the MCP server's instructions
    tools: str  # module with `build(runtime) -> LocalProvider`: every tool, ingestion's too
    commands: str  # module with `register(cli, ingest)`: `scoperag ingest <name>` and others
    methods: dict[str, str]  # Python API method -> the MCP tool it calls
    sample: Sample
    groups: dict[str, str]  # `scoperag list` grouping -> payload key counted (by a facet)
    deletes: dict[str, DeleteTarget]  # `scoperag delete` kind -> what it removes
    aliases: tuple[str, ...] = ()  # other spellings accepted (never listed in help)
    retriever: SearchTool | None = None  # what `retriever()` searches (None: its own kind)
    http: str | None = None  # module with `http_router(runtime)`: its HTTP routes
    unindexed: frozenset[str] = field(default_factory=frozenset)  # group keys with no index
    # `scoperag list --hashes`: each item's (id key, text key), listed with its first words
    hashes: tuple[str, str] | None = None
    # its object's class in the Python API, `module:Class` (None: its tools as methods)
    python_api: str | None = None
    # `scoperag list`: points by state, `module:function(backend, collection) -> state -> points`
    states: str | None = None
    # module reading and writing other servers' exports (`scoperag import`, `export --format`):
    # FORMATS, detect(text), import_text(runtime, format, text, report, progress), EXPORTS
    transfer: str | None = None
    # module keeping the profile's state beside its collection in an export (`scoperag export`
    # / `import`): export_state(settings) -> dict, checked_state(dict) (raises ValueError),
    # import_state(settings, dict) -> int
    state: str | None = None
    # where a hit came from in `scoperag search`'s listing: a format string over the hit's
    # fields and its result's (a list shown comma-separated, a missing value as "-"); None:
    # the hit's short fields
    source: str | None = None
    # tool -> where its answer keeps its hits (`server.results.hits`); a tool not named here
    # keeps them in `hits`, their text under `text`
    hits: dict[str, HitShape] = field(default_factory=dict)

    def collection(self, settings: Settings) -> str:
        """The collection the profile writes, under `settings`."""
        from scoperag.core.contracts.registry import contract_module

        (collection,) = contract_module(self.name).required_indexes(settings)
        return collection
