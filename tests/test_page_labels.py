"""Page labels of the real PDFs, against the labels listed in shared/data/SOURCES.md."""

from __future__ import annotations

from pathlib import Path

import pytest
from pypdf import PdfReader

from scoperag.pipelines.page_labels import label_runs, letters, page_labels, roman


def _span(first: int, last: int, style=str) -> list[str]:
    return [style(n) for n in range(first, last + 1)]


def _upper_roman(n: int) -> str:
    return roman(n).upper()


EXPECTED = {
    "qpdf-manual-5.1.3.pdf": _span(1, 4, roman) + _span(1, 39),
    "GeoTopo-komprimiert.pdf": _span(1, 3, roman) + _span(1, 114),
    "cython-reference-guide-0.29a0.pdf": ["1", "2", "i", "ii"] + _span(1, 7),
    "data-in-brief-22-sanni-page4.pdf": ["4"],
    "qpdf-page-labels-num-tree.pdf": ["i", "ii", "blank", "X-Q", "X-R", "", "III", "IV", "V"]
    + ["1", "2", "a", "c", "d", "e", "q.6", "q.7", "q.8", "q.9", "www", "12", "13", "16059"]
    + _span(50, 55, _upper_roman)
    + ["liv"],
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_every_page_label_matches_sources(shared_data: Path, name: str) -> None:
    assert page_labels(PdfReader(shared_data / "pdf" / name)) == EXPECTED[name]


def test_label_in_gap_between_number_tree_kids(shared_data: Path) -> None:
    """Regression: pypdf 7.1.0 labels index 10 of qpdf-page-labels-num-tree.pdf "11".

    Index 10 lies between the /Limits of two /Kids; the range starting at index 9 is /S /D /St 1,
    so the label is "2". Reading every leaf of the number tree gets it right.
    """
    reader = PdfReader(shared_data / "pdf" / "qpdf-page-labels-num-tree.pdf")
    assert page_labels(reader)[10] == "2"


def test_document_without_page_labels_counts_from_one(tmp_path: Path) -> None:
    from pypdf import PdfWriter

    writer = PdfWriter()
    for _ in range(3):
        writer.add_blank_page(width=100, height=100)
    path = tmp_path / "plain.pdf"
    writer.write(path)
    assert page_labels(PdfReader(path)) == ["1", "2", "3"]


def test_styles() -> None:
    assert [roman(n) for n in (1, 4, 9, 14, 40, 1994)] == ["i", "iv", "ix", "xiv", "xl", "mcmxciv"]
    assert [letters(n) for n in (1, 26, 27, 53)] == ["A", "Z", "AA", "AAA"]


def test_label_runs_group_counting_pages() -> None:
    labels = ["i", "ii", "iii", "1", "2", "A-1", "A-2", "x", "x"]
    runs = label_runs(list(enumerate(labels)))
    assert [(r.first_label, r.last_label, r.first_index, r.last_index) for r in runs] == [
        ("i", "iii", 0, 2),
        ("1", "2", 3, 4),
        ("A-1", "A-2", 5, 6),
        ("x", "x", 7, 7),
        ("x", "x", 8, 8),
    ]


def test_label_runs_break_on_missing_page() -> None:
    runs = label_runs([(0, "1"), (2, "3")])
    assert len(runs) == 2
