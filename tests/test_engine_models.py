"""`core.engine_models`: qdrant-client's filter and point shapes without importing it (issue 15).

Which points each filter selects, in both vocabularies and on both engines, is checked by
`test_edge_filters.py`; this file checks how filters are combined and converted.
"""

from __future__ import annotations

import subprocess
import sys

from qdrant_client import models

from scoperag.core import engine_models as own

SPELL = own.FieldCondition(key="kind", match=own.MatchValue(value="spell"))
HIDDEN = own.Filter(must=[own.FieldCondition(key="gen", match=own.MatchValue(value="g2"))])


def test_narrowed_adds_conditions_flat_and_leaves_the_filter_alone() -> None:
    flt = own.Filter(must=[SPELL], must_not=[HIDDEN])
    both = own.narrowed(flt, must=[HIDDEN], must_not=[SPELL])
    assert both == own.Filter(must=[SPELL, HIDDEN], must_not=[HIDDEN, SPELL])
    assert flt == own.Filter(must=[SPELL], must_not=[HIDDEN])
    assert own.narrowed(None, must_not=[HIDDEN]) == own.Filter(must_not=[HIDDEN])


def test_narrowed_takes_qdrant_clients_filters_and_single_conditions() -> None:
    theirs = models.Filter(
        must=models.FieldCondition(key="kind", match=models.MatchValue(value="spell")),
        should=[models.FieldCondition(key="n", range=models.Range(lt=5))],
    )
    flt = own.narrowed(theirs, must_not=[HIDDEN])
    assert flt.must == [theirs.must]
    assert flt.should == theirs.should
    assert flt.must_not == [HIDDEN]


def test_narrowed_keeps_a_min_should_by_nesting_the_whole_filter() -> None:
    """A `min_should` has no place in the flat filter: dropping it would widen the search."""
    theirs = models.Filter(
        min_should=models.MinShould(
            conditions=[models.FieldCondition(key="kind", match=models.MatchValue(value="x"))],
            min_count=1,
        )
    )
    flt = own.narrowed(theirs, must_not=[HIDDEN])
    assert flt == own.Filter(must=[theirs], must_not=[HIDDEN])
    assert own.to_client(flt) == models.Filter(must=[theirs], must_not=[own.to_client(HIDDEN)])


def test_to_client_converts_inside_lists_and_dicts_and_leaves_the_rest() -> None:
    sparse = own.SparseVector(indices=[1, 5], values=[0.5, 1.0])
    point = own.PointStruct(id=3, vector={"dense": [0.1, 0.2], "bm25": sparse}, payload={"a": 1})
    assert own.to_client(point) == models.PointStruct(
        id=3,
        vector={
            "dense": [0.1, 0.2],
            "bm25": models.SparseVector(indices=[1, 5], values=[0.5, 1.0]),
        },
        payload={"a": 1},
    )
    theirs = models.Filter(must=[models.HasIdCondition(has_id=[1])])
    assert own.to_client(theirs) is theirs
    assert own.to_client([None, "x", 2]) == [None, "x", 2]


def test_building_filters_imports_neither_qdrant_client_nor_numpy() -> None:
    """numpy comes only with a boolean value (Edge's quirk, `core.edge_filters`)."""
    probe = (
        "import sys\n"
        "from scoperag.core.fields import FieldType, FilterableField, build_filter\n"
        "from scoperag.core.edge_filters import to_edge_filter\n"
        "field = FilterableField(name='n', field_type=FieldType.INTEGER, condition='!=',\n"
        "                        description='n')\n"
        "print(to_edge_filter(build_filter([field], {'n': 3})) is not None,\n"
        "      'qdrant_client' in sys.modules, 'numpy' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["True", "False", "False"]
