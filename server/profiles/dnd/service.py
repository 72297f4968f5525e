"""dnd profile handlers: the work behind the tools declared in `server.profiles.dnd.tools`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from qdrant_client import models

from scoperag.core.contracts.dnd import COLLECTION, DOCUMENTS, KIND, KINDS
from scoperag.core.engine.node_payload import stored_text_and_metadata
from scoperag.core.errors import as_json
from scoperag.core.filters.fields import (
    FieldType,
    FilterableField,
    build_filter,
    empty_selection,
)
from scoperag.retrievers.fusion import Ranked, reciprocal_rank_fusion
from scoperag.retrievers.name_match import NameMatch
from scoperag.retrievers.name_search import NameSearch
from scoperag.retrievers.searches import HybridSearch, TextQuery
from scoperag.server.mcp.ingest_reports import file_entries
from scoperag.server.profiles.dnd.explain import explain_lookup, explain_search
from scoperag.server.profiles.dnd.models import (
    DndHit,
    DndResult,
    DocumentList,
    DocumentSummary,
    IngestResult,
    Lookup,
    SearchParams,
)
from scoperag.server.results.hits import drop_names, shape_of
from scoperag.server.results.shape import Fusion
from scoperag.server.runtime import Runtime

if TYPE_CHECKING:
    from scoperag.pipelines.dnd import FileProgress

EMPTY_HINT = (
    "No D&D content is ingested yet. Run `scoperag ingest dnd DIR` on Open5e fixture folders "
    "(such as data/v1/wotc-srd), or call the ingest_dnd tool."
)
_MANY = 10_000  # facet limit for "every value" (documents, kinds, sub-types)
_BY_NAME = models.OrderBy(key="name_order")


def _in_document(slug: str) -> models.Filter | None:
    return build_filter([DOCUMENTS], {DOCUMENTS.name: [slug]})


def _hit(
    payload: dict[str, Any],
    fusion: Fusion,
    score: float | None = None,
    match: NameMatch | None = None,
    similarity: float | None = None,
) -> DndHit:
    """An item as a result, with its figures; a hit found by name says how its name matched."""
    text, metadata = stored_text_and_metadata(payload)
    how = {"match": match.match, "name_similarity": match.similarity} if match else {}
    figures = {"score": score, "fusion": fusion, "similarity": similarity}
    return DndHit(**metadata, text=text, **figures, **how)


class DndService:
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
        unknown = [slug for slug in values.get("documents") or [] if not self._holds(slug)]
        if unknown:
            known = sorted(self.known_documents())
            return (
                f"Unknown document slug(s) {as_json(unknown)} in 'documents'; known slugs: "
                f"{', '.join(known) or 'none'}. Nothing was searched."
            )
        return None

    def _holds(self, slug: str) -> bool:
        """Whether any item of the document `slug` is stored (one point read, not a count)."""
        in_document = _in_document(slug)
        return bool(self.runtime.backend.scroll(COLLECTION, in_document, limit=1))

    def _unknown_values(self, lookup: Lookup, values: dict[str, Any]) -> list[str]:
        """Notes on free-text keyword filters whose value no item of the kind has."""
        of_kind = build_filter([KIND], {KIND.name: lookup.kind})
        notes = []
        for field in lookup.fields:
            value = values.get(field.name)
            free_text = field.field_type is FieldType.KEYWORD and not field.choices
            if value is None or not free_text or field.is_list:
                continue
            known = self.runtime.backend.facet(COLLECTION, field.payload_key, of_kind, _MANY)
            if value not in known:
                listed = ", ".join(sorted(known))
                shown = as_json(value)
                notes.append(f"No {lookup.kind} has {field.name} {shown}; known: {listed}.")
        return notes

    def lookup(self, lookup: Lookup, params: BaseModel) -> DndResult:
        values = params.model_dump()
        if reason := self._refusal(lookup.fields, values):
            return DndResult(results=[], total=0, message=reason)
        backend = self.runtime.backend
        flt = build_filter([KIND, *lookup.fields], {**values, KIND.name: lookup.kind})
        limit, matches = values["limit"], None
        if values["name"]:
            names = self._names(flt, limit)
            found = names.find(values["name"], enough=limit)
            how = {match.name: match for match in found.matches}
            results = [
                _hit(record.payload, "name", score, how[record.payload["name"]])
                for record, score in names.matched_records(found.matches)
            ]
            total, matches = names.total(found), found.matches
        else:
            records = backend.scroll(COLLECTION, flt, limit, order_by=_BY_NAME)
            results = [_hit(record.payload, "name_order") for record in records]
            short = len(records) < limit  # then these are all: nothing to count
            total = len(records) if short else backend.count(COLLECTION, flt)
        if not results:
            notes = self._unknown_values(lookup, values)
            message = " ".join([f"No {lookup.kind} matches these filters.", *notes])
        elif total > len(results):
            message = f"Showing {len(results)} of {total}; narrow the filters or raise 'limit'."
        else:
            message = None
        result = DndResult(results=results, total=total, message=message)
        if values["explain"]:
            left = self._left_out(flt, limit, matches, {hit.name for hit in results}, total)
            result.explain = explain_lookup(results, flt, limit, matches, *left)
        return result

    def _left_out(
        self,
        flt: models.Filter | None,
        limit: int,
        matches: list[NameMatch] | None,
        shown: set[str],
        total: int,
    ) -> tuple[list[tuple[Any, float | None, dict[str, Any]]], int]:
        """What a lookup's limit left out, and how many: the names not shown (a name search),
        else the next points in alphabetical order (their ids; the first 20 read); each with
        what names it."""
        if matches is not None:
            left = [
                (match.name, match.score, {"name": match.name})
                for match in matches
                if match.name not in shown
            ]
            return left, len(left)
        if total <= limit:
            return [], 0
        after = self.runtime.backend.scroll(COLLECTION, flt, 20, offset=limit, order_by=_BY_NAME)
        keys = shape_of("search_dnd_content").identity
        named = [{key: (r.payload or {}).get(key) for key in keys} for r in after]
        return [(r.id, None, n) for r, n in zip(after, named, strict=True)], total - limit

    def _names(self, flt: models.Filter | None, limit: int) -> NameSearch:
        """Names under `flt`; a name in several documents in the configured document order."""
        priority = tuple(self.runtime.settings.dnd_document_priority)
        return NameSearch(
            self.runtime.backend, COLLECTION, flt, limit, tie_key="document", tie_priority=priority
        )

    def search(self, params: SearchParams) -> DndResult:
        values = params.model_dump()
        if reason := self._refusal((DOCUMENTS,), values):
            return DndResult(results=[], total=0, message=reason)
        backend = self.runtime.backend
        flt = build_filter([DOCUMENTS], values)
        limit = values["limit"]
        query = values["query"]
        explain = values["explain"]
        hybrid = HybridSearch(
            backend, self.runtime.embedder, COLLECTION, flt, limit, explain=explain
        )
        names = self._names(flt, limit)
        matches = names.find(query, limit).matches
        found = names.matched_records(matches)
        points = hybrid.points(TextQuery(query))
        fused = reciprocal_rank_fusion(
            [
                [Ranked(p.id, p.score, p.payload) for p in points],
                [Ranked(record.id, score, record.payload) for record, score in found],
            ],
            len(found) + limit if explain else limit,  # explain: every item, to say what was cut
        )
        cosines = {point.id: point.score for point in points}
        how = {match.name: match for match in matches}
        by_id = {record.id: how.get(record.payload["name"]) for record, _ in found}
        results = [
            _hit(hit.item, "rrf", hit.score, by_id.get(hit.key), cosines.get(hit.key))
            for hit in fused[:limit]
        ]
        result = DndResult(
            results=results,
            total=len(results),
            message=None if results else "Nothing matches in these documents.",
        )
        if explain and hybrid.last is not None:
            names = drop_names("search_dnd_content", backend, COLLECTION)
            result.explain = explain_search(results, fused, limit, hybrid.last, flt, by_id, names)
        return result

    def list_documents(self, _params: BaseModel) -> DocumentList:
        backend = self.runtime.backend
        if not backend.collection_exists(COLLECTION):
            return DocumentList(documents=[], message=EMPTY_HINT)
        documents = []
        for slug, total in sorted(self.known_documents().items()):
            in_document = _in_document(slug)
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
    from scoperag.pipelines.dnd import ingest_folders  # LlamaIndex: ingestion only

    reports = ingest_folders(paths, runtime.backend, runtime.embedder, progress)
    ok = sum(report.ok for report in reports)
    return IngestResult(
        files=file_entries(reports),
        ingested=ok,
        skipped=len(reports) - ok,
        items=sum(report.items for report in reports),
    )
