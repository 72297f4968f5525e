"""Filling a benchmark store: each profile's payloads with cached vectors, and ingestion."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from typing import Any


def settings_for(data_dir: Path, backend: str, profile: str) -> Any:
    from scoperag.core.config.settings import Settings

    if backend == "server":
        return Settings(
            data_dir=data_dir, qdrant_url=os.environ["SCOPERAG_QDRANT_URL"], profiles=[profile]
        )
    return Settings(data_dir=data_dir, backend=backend, profiles=[profile])


def nodes_of(scenario: Any, passages: list[Any], vectors: Any, start: int = 0) -> list[Any]:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

    from scoperag.pipelines.point_ids import stable_id

    nodes = []
    for offset, passage in enumerate(passages):
        n = start + offset
        metadata, source = scenario.payload(n, passage)
        nodes.append(
            TextNode(
                id_=stable_id("bench", scenario.profile, n),
                text=passage.text,
                metadata=metadata,
                # as in the profiles' pipelines, the vector is of the text alone
                excluded_embed_metadata_keys=list(metadata),
                excluded_llm_metadata_keys=list(metadata),
                relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)},
                embedding=None if vectors is None else vectors[offset].tolist(),
            )
        )
    return nodes


def bulk_load(
    runtime: Any, scenario: Any, fields: list[Any], corpus: list[Any], vectors: Any
) -> float:
    """Write the corpus with its cached vectors; returns nodes per second."""
    from scoperag.core.engine.collections import prepare_for_writing

    backend = runtime.backend
    prepare_for_writing(backend, runtime.embedder, scenario.collection, fields)
    store = backend.vector_store(scenario.collection)
    began = time.perf_counter()
    for start in range(0, len(corpus), 1000):
        stop = start + 1000
        store.add(nodes_of(scenario, corpus[start:stop], vectors[start:stop], start))
    return len(corpus) / (time.perf_counter() - began)


def ingestion(runtime: Any, scenario: Any, fields: list[Any], held_out: list[Any]) -> dict:
    """Raw embedding throughput vs the pipeline's last steps (embed + write) on new nodes."""
    from scoperag.pipelines.store import EmbedNodes, write_nodes

    texts = [passage.text for passage in held_out]
    began = time.perf_counter()
    runtime.embedder.embed_texts(texts)
    raw = len(texts) / (time.perf_counter() - began)
    nodes = nodes_of(scenario, held_out, None, start=10**9)
    began = time.perf_counter()
    EmbedNodes(embedder=runtime.embedder)(nodes)
    write_nodes(runtime.backend, runtime.embedder, scenario.collection, fields, nodes)
    ingest = len(nodes) / (time.perf_counter() - began)
    return {
        "texts": len(texts),
        "raw_embedding_per_s": round(raw, 1),
        "ingestion_per_s": round(ingest, 1),
        "ratio": round(ingest / raw, 3),
    }


def store_dir(options: dict[str, Any], backend: str, size: int, profile: str) -> Path:
    """A fresh data dir, or with --store a kept one per checkout, engine, size and profile."""
    if not options["store"]:
        return Path(tempfile.mkdtemp(prefix=f"bench-{backend}-"))
    return Path(options["store"]) / f"{options['code']}-{backend}-{size}-{profile}"
