"""Tool results as TOON text with the paging figures in a header above the rows.

The same data goes out as structured content, so a client may read either. `toons` (Rust)
encodes it: the same text as the official `toon-format` encoder gives for these results, checked
by `tests/test_toon_output.py`, at a twentieth of its time (0.014 ms against 0.26 for a page
of 10 memories, 0.12 against 2.4 ms for 100).
"""

from __future__ import annotations

import math

import toons
from fastmcp.tools import ToolResult
from pydantic import BaseModel, Field


class PageFigures(BaseModel):
    """Where a page sits in the whole result: the header every paged result starts with."""

    page: int = Field(description="This page's number (1-based).")
    page_size: int = Field(description="Rows per page.")
    total: int = Field(description="Rows in the whole result.")
    total_pages: int = Field(description="Pages in the whole result (0 when empty).")
    has_more: bool = Field(description="Whether a later page has rows.")

    @classmethod
    def of(cls, page: int, page_size: int, total: int) -> PageFigures:
        pages = math.ceil(total / page_size)
        return cls(
            page=page, page_size=page_size, total=total, total_pages=pages, has_more=page < pages
        )


def toon_result(result: BaseModel) -> ToolResult:
    """`result` as TOON text (fields left empty are omitted) plus the same structured content."""
    data = result.model_dump(mode="json", exclude_none=True)
    return ToolResult(content=toons.dumps(data), structured_content=data)
