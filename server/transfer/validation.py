"""What an import checks before it writes: a section's header whole, then each point line.

A header is refused by the field it cannot honour (`HeaderError`): its format version, its
profile, its embedder against its own metadata's record, an index type, the dense encoding.
A point is refused (`ValueError` saying why) for an id out of range, a dense vector that is not
finite or not of the header's dimension, a sparse vector with negative, repeated or misaligned
indices, a payload its profile's payload model (or LlamaIndex's node keys) refuses, or an id
already given on an earlier line of the section.
"""

from __future__ import annotations

import json
import math
import uuid
from typing import Any

import numpy as np
from pydantic import BaseModel, ValidationError

from scoperag.core.config.settings import Settings
from scoperag.core.contracts import profile_names
from scoperag.core.contracts.registry import contract_module
from scoperag.core.engine.collection_embedder import EMBEDDER_KEY
from scoperag.core.errors import ScoperagError
from scoperag.server.transfer.formats import DENSE_ENCODING, VERSION, ExportHeader, decode_dense

INDEX_TYPES = ("keyword", "integer", "float", "bool", "datetime", "text", "uuid")
MAX_ID = 2**64 - 1
MAX_SPARSE_INDEX = 2**32 - 1
NUMBERS = (int, float)  # exact types: a bool is neither
NODE_KEYS = ("_node_type", "doc_id", "document_id", "ref_doc_id")  # text, when present


class HeaderError(ScoperagError):
    """A section header naming something this store cannot honour; nothing of it is written."""

    def __init__(self, field: str, value: object, accepted: str) -> None:
        self.field = field
        shown = json.dumps(value, default=str)[:200]
        super().__init__(f"the header's '{field}' is {shown}; accepted: {accepted}")


def checked_header(raw: dict[str, Any]) -> ExportHeader:
    """The header of a section, checked whole; `HeaderError` names the first field refused."""
    if raw.get("version") != VERSION:
        raise HeaderError("version", raw.get("version"), f"{VERSION} (this scoperag's format)")
    if raw.get("profile") not in profile_names():
        raise HeaderError("profile", raw.get("profile"), ", ".join(profile_names()))
    try:
        header = ExportHeader.model_validate(raw)
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"])
        raise HeaderError(field, error.get("input"), error["msg"]) from None
    recorded = header.metadata.get(EMBEDDER_KEY)
    named = header.embedder.model_dump() if header.embedder is not None else None
    if named is not None and recorded is not None and recorded != named:
        raise HeaderError(
            f"metadata.{EMBEDDER_KEY}", recorded, f"the embedder the header names ({named})"
        )
    for key, kind in header.indexes.items():
        if kind not in INDEX_TYPES:
            raise HeaderError(f"indexes.{key}", kind, ", ".join(INDEX_TYPES))
    if header.dense_encoding != DENSE_ENCODING:
        raise HeaderError("dense_encoding", header.dense_encoding, DENSE_ENCODING)
    if header.points < 0:
        raise HeaderError("points", header.points, "a count of 0 or more")
    return header


def point_key(point_id: object) -> str:
    """The id a point line gives, as the engine keys it (a UUID's every spelling is one id)."""
    if isinstance(point_id, bool) or not isinstance(point_id, int | str):
        raise ValueError(f"'id' must be an unsigned integer or a UUID, got {point_id!r}")
    if isinstance(point_id, int):
        if not 0 <= point_id <= MAX_ID:
            raise ValueError(f"'id' {point_id} is out of range (0 to {MAX_ID})")
        return str(point_id)
    try:
        return str(uuid.UUID(point_id))
    except ValueError:
        raise ValueError(f"'id' must be an unsigned integer or a UUID, got {point_id!r}") from None


def checked_dense(value: object, dimension: int | None) -> list[float]:
    """A dense vector of finite numbers and the header's dimension."""
    dense = decode_dense(value)
    if dimension is not None and len(dense) != dimension:
        raise ValueError(f"'dense' has {len(dense)} numbers, the header says {dimension}")
    if not dense or not np.isfinite(np.asarray(dense, dtype=np.float64)).all():
        raise ValueError("'dense' must be finite numbers (not NaN or infinite), at least one")
    return dense


def checked_sparse(value: object) -> dict[str, list[Any]]:
    """A sparse vector: unique indices in range, one finite value each."""
    if not isinstance(value, dict) or set(value) != {"indices", "values"}:
        raise ValueError("'sparse' must be an object of 'indices' and 'values'")
    indices, values = value["indices"], value["values"]
    if not isinstance(indices, list) or not isinstance(values, list):
        raise ValueError("'sparse' indices and values must be lists")
    if len(indices) != len(values):
        raise ValueError(f"'sparse' has {len(indices)} indices and {len(values)} values")
    whole = all(type(index) is int for index in indices)  # a bool is not one here
    if not (whole and 0 <= min(indices, default=0) <= max(indices, default=0) <= MAX_SPARSE_INDEX):
        for index in indices:  # the first index refused, named
            if isinstance(index, bool) or not isinstance(index, int):
                raise ValueError(f"'sparse' index {index!r} is not a whole number")
            if not 0 <= index <= MAX_SPARSE_INDEX:
                raise ValueError(
                    f"'sparse' index {index} is out of range (0 to {MAX_SPARSE_INDEX})"
                )
    if len(set(indices)) != len(indices):
        raise ValueError("'sparse' repeats an index")
    numbers = all(type(number) in NUMBERS for number in values)
    if not (numbers and _finite(sum(values))):
        for number in values:  # the first value refused, named
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise ValueError(f"'sparse' value {number!r} is not a number")
            if not _finite(number):
                raise ValueError(f"'sparse' value {number!r} is not finite")
    return {"indices": indices, "values": values}


def _finite(number: float) -> bool:
    """Whether `number` is a finite float (an int past a float's range is not)."""
    try:
        return math.isfinite(number)
    except OverflowError:
        return False


def payload_model(profile: str) -> type[BaseModel] | None:
    """The model every stored payload of `profile` fits (its contract's `PAYLOAD_MODEL`)."""
    return getattr(contract_module(profile), "PAYLOAD_MODEL", None)


def collection_models(settings: Settings) -> dict[str, type[BaseModel] | None]:
    """Collection -> the payload model of the profile that writes it, for every profile."""
    return {
        collection: payload_model(profile)
        for profile in profile_names()
        for collection in contract_module(profile).required_indexes(settings)
    }


def payload_problem(payload: object, model: type[BaseModel] | None) -> str | None:
    """Why a stored payload does not fit `model` and LlamaIndex's node layout (None: it fits)."""
    if not isinstance(payload, dict):
        return "'payload' must be an object"
    try:
        if model is not None:
            model.model_validate(payload)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        given = json.dumps(error.get("input"), default=str)[:80]
        return f"payload '{where}': {error['msg']} (got {given})"
    node = payload.get("_node_content")
    try:
        whole = isinstance(node, str) and isinstance(json.loads(node), dict)
    except ValueError:
        whole = False
    if not whole:
        return "payload '_node_content' must be LlamaIndex's node as JSON text"
    for key in NODE_KEYS:
        if key in payload and not isinstance(payload[key], str):
            return f"payload '{key}' must be text"
    return None


def checked_point(
    line: dict[str, Any], dimension: int | None, model: type[BaseModel] | None
) -> Any:
    """A point line as a `PointStruct`, every part checked; `ValueError` says what is wrong."""
    from qdrant_client import models

    from scoperag.core.engine.vector_names import DENSE_VECTOR, SPARSE_VECTOR

    point_key(line.get("id"))
    problem = payload_problem(line.get("payload"), model)
    if problem is not None:
        raise ValueError(problem)
    vectors: dict[str, Any] = {DENSE_VECTOR: checked_dense(line.get("dense"), dimension)}
    if line.get("sparse") is not None:
        vectors[SPARSE_VECTOR] = models.SparseVector(**checked_sparse(line["sparse"]))
    # every number checked above: built without validating each one again
    return models.PointStruct.model_construct(
        id=line["id"], vector=vectors, payload=line["payload"]
    )
