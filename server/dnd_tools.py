"""dnd profile tools: search_dnd_content, the five lookups and list_documents (Open5e content).

Every tool takes `documents` (source slugs): left out = all, [] = nothing (with a message), an
unknown slug = nothing (with a message naming the known ones); it is ANDed with the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastmcp import FastMCP
from llama_index.core.llms.mock import MockLLM
from llama_index.core.retrievers import QueryFusionRetriever
from llama_index.core.retrievers.fusion_retriever import FUSION_MODES
from llama_index.core.schema import BaseNode
from llama_index.core.vector_stores.utils import metadata_dict_to_node
from pydantic import BaseModel, Field, field_validator
from qdrant_client import models

from core.contracts.dnd import (
    CHALLENGE_RATING,
    COLLECTION,
    DOCUMENTS,
    ITEM_TYPE,
    KINDS,
    LEVEL,
    OPTION_TYPE,
    RULE_TYPE,
    SCHOOL,
    TYPE,
    DndItemPayload,
    parse_challenge_rating,
)
from core.fields import FieldType, FilterableField, build_filter, empty_selection
from pipelines.dnd import FileProgress, ingest_folders
from retrievers.filtered import FilteredRetriever
from retrievers.name_match import NameMatchRetriever
from server.runtime import Runtime
from server.tooling import ModelTool, params_model

EMPTY_HINT = (
    "No D&D content is ingested yet. Run `scoperag ingest dnd DIR` on Open5e fixture folders "
    "(such as data/v1/wotc-srd), with the server stopped when it uses the embedded store."
)
_MANY = 10_000  # facet limit for "every value" (documents, kinds, sub-types)


class SearchParams(BaseModel):
    query: str = Field(min_length=1, description="What to look for: a name or a description.")
    limit: int = Field(default=10, ge=1, le=100, description="How many results at most.")


class LookupParams(BaseModel):
    name: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "Name to look up, case-insensitive: the whole name first, else names containing it "
            "('dragon' finds 'Adult Red Dragon'), else close spellings ('firebal' finds "
            "'Fireball'). Leave out to list in alphabetical order."
        ),
    )
    limit: int = Field(default=20, ge=1, le=100, description="How many results at most.")

    @field_validator("school", "type", mode="before", check_fields=False)
    @classmethod
    def _case_insensitive(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("challenge_rating", mode="before", check_fields=False)
    @classmethod
    def _fraction(cls, value: Any) -> Any:
        return parse_challenge_rating(value) if isinstance(value, str) else value


class DndHit(DndItemPayload):
    """One item, with the document it comes from."""

    name_order: int | None = Field(default=None, exclude=True)
    text: str = Field(description="The whole entry.")
    score: float | None = Field(
        default=None, description="Name match or fused search score (higher is better)."
    )
    match: str | None = Field(
        default=None, description="How the name matched: exact, partial or fuzzy."
    )


class DndResult(BaseModel):
    results: list[DndHit]
    total: int = Field(description="How many items match in all (results stop at `limit`).")
    message: str | None = None


class DocumentSummary(BaseModel):
    document: str = Field(description="The slug to pass in `documents`.")
    title: str | None
    total: int
    counts: dict[str, int] = Field(description="Items per kind.")


class DocumentList(BaseModel):
    documents: list[DocumentSummary]
    message: str | None = None


class NoParams(BaseModel):
    """A tool without parameters."""


class IngestResult(BaseModel):
    files: list[dict[str, Any]]
    ingested: int = Field(description="Files whose items were written.")
    skipped: int = Field(description="Files skipped: unreadable, or holding no kind ingested.")
    items: int = Field(description="Items written in all.")


@dataclass(frozen=True)
class Lookup:
    """One lookup tool: the kind it returns and the filters it takes besides `name`."""

    tool: str
    kind: str
    fields: tuple[FilterableField, ...]
    description: str


LOOKUPS = (
    Lookup(
        "lookup_spell",
        "spell",
        (LEVEL, SCHOOL, DOCUMENTS),
        "Look up spells by name, level (0 = cantrip) and school.",
    ),
    Lookup(
        "lookup_creature",
        "creature",
        (TYPE, CHALLENGE_RATING, DOCUMENTS),
        "Look up creatures (monsters) by name, type and challenge rating.",
    ),
    Lookup(
        "lookup_equipment",
        "equipment",
        (ITEM_TYPE, DOCUMENTS),
        "Look up equipment by name and item_type (weapon, armor, magic-item).",
    ),
    Lookup(
        "lookup_character_option",
        "character-option",
        (OPTION_TYPE, DOCUMENTS),
        "Look up character options by name and option_type (class, archetype, race, subrace, "
        "background, feat).",
    ),
    Lookup(
        "lookup_rule",
        "rule",
        (RULE_TYPE, DOCUMENTS),
        "Look up rules by name and rule_type (section of the rules, condition, plane).",
    ),
)
_SHARED_RULES = (
    " documents: source slugs from list_documents; left out = all, [] = nothing, an unknown slug "
    "= nothing (the message lists the known slugs). Every filter given narrows the result (AND). "
    "Every result says which document it comes from."
)


def _equals(key: str, value: Any) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def _hit(node: BaseNode, score: float | None = None, match: str | None = None) -> DndHit:
    return DndHit(**node.metadata, text=node.get_content(), score=score, match=match)


class DndTools:
    """The dnd profile's handlers over one runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def known_documents(self) -> dict[str, int]:
        """Slug -> number of items, for every ingested document."""
        return self.runtime.backend.facet(COLLECTION, "document", None, _MANY)

    def _refusal(self, fields: tuple[FilterableField, ...], values: dict[str, Any]) -> str | None:
        """Why the answer is empty before asking: `[]`, nothing ingested, unknown slugs."""
        if reason := empty_selection(fields, values):
            return reason
        if not self.runtime.backend.collection_exists(COLLECTION):
            return EMPTY_HINT
        wanted = values.get("documents")
        known = sorted(self.known_documents()) if wanted else []
        unknown = [slug for slug in wanted or [] if slug not in known]
        if unknown:
            return (
                f"Unknown document slug(s) {unknown} in 'documents'; known slugs: "
                f"{', '.join(known) or 'none'}. Nothing was searched."
            )
        return None

    def _unknown_values(self, lookup: Lookup, values: dict[str, Any]) -> list[str]:
        """Notes on free-text keyword filters whose value no item of the kind has."""
        notes = []
        for field in lookup.fields:
            value = values.get(field.name)
            if field.field_type is not FieldType.KEYWORD or field.choices or field.is_list:
                continue
            if value is None:
                continue
            known = self.runtime.backend.facet(
                COLLECTION,
                field.payload_key,
                models.Filter(must=[_equals("kind", lookup.kind)]),
                _MANY,
            )
            if value not in known:
                listed = ", ".join(sorted(known))
                notes.append(f"No {lookup.kind} has {field.name} {value!r}; known: {listed}.")
        return notes

    def lookup(self, lookup: Lookup, params: BaseModel) -> DndResult:
        values = params.model_dump()
        if reason := self._refusal(lookup.fields, values):
            return DndResult(results=[], total=0, message=reason)
        backend = self.runtime.backend
        flt = build_filter(lookup.fields, values, extra=[_equals("kind", lookup.kind)])
        if values["name"]:
            names = NameMatchRetriever(
                backend, COLLECTION, flt, values["limit"], tie_key="document"
            )
            matches = names.matches(values["name"])
            how = {match.name: match.match for match in matches}
            results = [
                _hit(found.node, found.score, how[found.node.metadata["name"]])
                for found in names.retrieve_matches(matches)
            ]
            total = sum(match.count for match in matches)
        else:
            records = backend.scroll(
                COLLECTION, flt, values["limit"], order_by=models.OrderBy(key="name_order")
            )
            results = [_hit(metadata_dict_to_node(record.payload)) for record in records]
            total = backend.count(COLLECTION, flt)
        if not results:
            notes = self._unknown_values(lookup, values)
            message = " ".join([f"No {lookup.kind} matches these filters.", *notes])
        elif total > len(results):
            message = f"Showing {len(results)} of {total}; narrow the filters or raise 'limit'."
        else:
            message = None
        return DndResult(results=results, total=total, message=message)

    def search(self, params: SearchParams) -> DndResult:
        values = params.model_dump()
        if reason := self._refusal((DOCUMENTS,), values):
            return DndResult(results=[], total=0, message=reason)
        backend = self.runtime.backend
        flt = build_filter([DOCUMENTS], values)
        limit = values["limit"]
        fusion = QueryFusionRetriever(
            [
                FilteredRetriever(backend, self.runtime.embedder, COLLECTION, flt, limit),
                NameMatchRetriever(backend, COLLECTION, flt, limit, tie_key="document"),
            ],
            llm=MockLLM(),  # num_queries=1: the query is used as given, no LLM is ever asked
            mode=FUSION_MODES.RECIPROCAL_RANK,
            similarity_top_k=limit,
            num_queries=1,
            use_async=False,
        )
        results = [_hit(found.node, found.score) for found in fusion.retrieve(values["query"])]
        return DndResult(
            results=results,
            total=len(results),
            message=None if results else "Nothing matches in these documents.",
        )

    def list_documents(self, _params: BaseModel) -> DocumentList:
        backend = self.runtime.backend
        if not backend.collection_exists(COLLECTION):
            return DocumentList(documents=[], message=EMPTY_HINT)
        documents = []
        for slug, total in sorted(self.known_documents().items()):
            in_document = models.Filter(must=[_equals("document", slug)])
            first = backend.scroll(COLLECTION, in_document, limit=1)
            counts = backend.facet(COLLECTION, "kind", in_document, len(KINDS))
            documents.append(
                DocumentSummary(
                    document=slug,
                    title=first[0].payload.get("document_title") if first else None,
                    total=total,
                    counts=dict(sorted(counts.items())),
                )
            )
        return DocumentList(documents=documents, message=None if documents else EMPTY_HINT)


def ingest_paths(
    runtime: Runtime, paths: list[Path], progress: FileProgress | None
) -> IngestResult:
    """Ingest Open5e folders (or a folder of them, or single files) into the dnd collection."""
    reports = ingest_folders(paths, runtime.backend, runtime.embedder, progress)
    files = [{k: v for k, v in vars(report).items() if v not in (None, [])} for report in reports]
    ok = sum(report.ok for report in reports)
    return IngestResult(
        files=files,
        ingested=ok,
        skipped=len(reports) - ok,
        items=sum(report.items for report in reports),
    )


def _tool_model(tool: str) -> str:
    return "".join(part.title() for part in tool.split("_")) + "Params"


def build(runtime: Runtime) -> FastMCP:
    """The dnd sub-server."""
    tools = DndTools(runtime)
    mcp = FastMCP("scoperag-dnd")
    mcp.add_tool(
        ModelTool.build(
            "search_dnd_content",
            "Search D&D 5e content (spells, creatures, equipment, character options, rules) by "
            "meaning and by name at once; the hits of both are merged without duplicates."
            + _SHARED_RULES,
            params_model("SearchDndContentParams", SearchParams, [DOCUMENTS]),
            tools.search,
            DndResult,
        )
    )
    for lookup in LOOKUPS:
        mcp.add_tool(
            ModelTool.build(
                lookup.tool,
                lookup.description
                + " The same name in two documents gives two results."
                + _SHARED_RULES,
                params_model(_tool_model(lookup.tool), LookupParams, lookup.fields),
                lambda params, lookup=lookup: tools.lookup(lookup, params),
                DndResult,
            )
        )
    mcp.add_tool(
        ModelTool.build(
            "list_documents",
            "List every ingested D&D source document: its slug (for `documents`), title and "
            "number of items per kind.",
            NoParams,
            tools.list_documents,
            DocumentList,
        )
    )
    return mcp
