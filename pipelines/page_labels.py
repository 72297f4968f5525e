"""Page labels computed from a PDF's /PageLabels number tree (PDF 32000-1, 12.4.2).

pypdf 7.1.0 falls back to `index + 1` for a page whose index lies between the /Limits of two
/Kids of the tree (qpdf-page-labels-num-tree.pdf, index 10: "11" instead of "2"). Here every leaf
of the tree is read, whatever its /Limits say, and each page takes the range that starts at or
before it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pypdf import PdfReader
    from pypdf.generic import DictionaryObject

_ROMAN = [
    (1000, "m"), (900, "cm"), (500, "d"), (400, "cd"), (100, "c"), (90, "xc"),
    (50, "l"), (40, "xl"), (10, "x"), (9, "ix"), (5, "v"), (4, "iv"), (1, "i"),
]  # fmt: skip


def roman(number: int) -> str:
    """Lower-case roman numeral of a positive number."""
    out = []
    for value, letters in _ROMAN:
        count, number = divmod(number, value)
        out.append(letters * count)
    return "".join(out)


def letters(number: int) -> str:
    """A..Z, then AA..ZZ, AAA..: the PDF's letter style (the letter repeats)."""
    return chr(ord("A") + (number - 1) % 26) * ((number - 1) // 26 + 1)


_STYLES = {
    "/D": str,
    "/R": lambda n: roman(n).upper(),
    "/r": roman,
    "/A": letters,
    "/a": lambda n: letters(n).lower(),
}


@dataclass(frozen=True)
class LabelRange:
    """Pages from `start` on share a numbering style, a prefix and a first number."""

    start: int
    style: str | None
    prefix: str
    first: int

    def label(self, index: int) -> str:
        if self.style not in _STYLES:
            return self.prefix
        return self.prefix + _STYLES[self.style](self.first + index - self.start)


def _leaves(node: DictionaryObject) -> list[tuple[int, DictionaryObject]]:
    """Every (key, value) pair of a number tree, from /Nums and every /Kids below."""
    pairs: list[tuple[int, DictionaryObject]] = []
    nums = node.get("/Nums")
    if nums is not None:
        nums = nums.get_object()
        for i in range(0, len(nums) - 1, 2):
            pairs.append((int(nums[i]), nums[i + 1].get_object()))
    for kid in node.get("/Kids", []) or []:
        pairs.extend(_leaves(kid.get_object()))
    return pairs


def label_ranges(reader: PdfReader) -> list[LabelRange]:
    """The label ranges of a document, sorted by first page; decimal from 1 when it has none."""
    tree = reader.trailer["/Root"].get("/PageLabels")
    if tree is None:
        return [LabelRange(0, "/D", "", 1)]
    ranges = []
    for start, spec in sorted(_leaves(tree.get_object()), key=lambda pair: pair[0]):
        style = spec.get("/S")
        ranges.append(
            LabelRange(
                start=start,
                style=str(style) if style is not None else None,
                prefix=str(spec.get("/P", "")),
                first=int(spec.get("/St", 1)),
            )
        )
    if not ranges or ranges[0].start > 0:
        ranges.insert(0, LabelRange(0, "/D", "", 1))
    return ranges


def page_labels(reader: PdfReader) -> list[str]:
    """The label of every page, by physical index."""
    ranges = label_ranges(reader)
    starts = [r.start for r in ranges]
    return [
        ranges[bisect.bisect_right(starts, index) - 1].label(index)
        for index in range(len(reader.pages))
    ]


def _roman_value(text: str) -> int | None:
    """The number a lower-case roman numeral stands for, or None if it is not one."""
    total, previous = 0, 0
    values = {letters: value for value, letters in _ROMAN if len(letters) == 1}
    for char in reversed(text):
        value = values.get(char)
        if value is None:
            return None
        total += -value if value < previous else value
        previous = max(previous, value)
    return total if total and roman(total) == text else None


def _successors(label: str) -> set[str]:
    """Labels that may follow `label` in one numbering run (decimal, roman, letters)."""
    out = set()
    if match := re.fullmatch(r"(.*?)(\d+)", label):
        out.add(match[1] + str(int(match[2]) + 1))
    if match := re.fullmatch(r"(.*?)([ivxlcdm]+|[IVXLCDM]+)", label):
        value = _roman_value(match[2].lower())
        if value:
            following = roman(value + 1)
            out.add(match[1] + (following if match[2].islower() else following.upper()))
    if match := re.fullmatch(r"(.*?)(([a-zA-Z])\3*)", label):
        number = (ord(match[3].upper()) - ord("A") + 1) + 26 * (len(match[2]) - 1)
        following = letters(number + 1)
        out.add(match[1] + (following if match[3].isupper() else following.lower()))
    return out


@dataclass(frozen=True)
class LabelRun:
    """Consecutive pages whose labels count up in one style, e.g. i..iv on pages 0..3."""

    first_label: str
    last_label: str
    first_index: int
    last_index: int


def label_runs(pages: list[tuple[int, str]]) -> list[LabelRun]:
    """Group (physical index, label) pairs, sorted by index, into counting runs."""
    runs: list[LabelRun] = []
    for index, label in pages:
        last = runs[-1] if runs else None
        if last and index == last.last_index + 1 and label in _successors(last.last_label):
            runs[-1] = LabelRun(last.first_label, label, last.first_index, index)
        else:
            runs.append(LabelRun(label, label, index, index))
    return runs
