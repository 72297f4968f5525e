"""The memory search's TOON text (encoded by `toons`) against the official `toon-format`.

Generated pages of every shape the `search` tool returns (odd texts with quotes, commas, colons,
leading dashes, number- and keyword-like strings, newlines and control characters; scores; notes)
must give the very text the official encoder gives, and decode with the official decoder to the
tool's structured content.
"""

from __future__ import annotations

import toon_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scoperag.server.profiles.memory.models import MemoryRow, SearchResult
from scoperag.server.profiles.memory.toon_output import PageFigures, toon_result

TRICKY = ["", "-", "- x", "1e5", "05", "-0", "null", "true", "a: b", "x,y", '"q"', "[1]", "#c"]
texts = st.one_of(
    st.sampled_from(TRICKY),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=60),  # the tools refuse surrogates
)
rows = st.builds(
    MemoryRow,
    content=texts,
    tags=st.lists(texts, max_size=4),
    memory_type=texts,
    created_at=texts,
    content_hash=texts,
    score=st.one_of(st.none(), st.floats(0, 1).map(lambda score: round(score, 4))),
)


@st.composite
def pages(draw: st.DrawFn) -> SearchResult:
    size = draw(st.integers(1, 100))
    figures = PageFigures.of(draw(st.integers(1, 10_000)), size, draw(st.integers(0, 10**6)))
    return SearchResult(
        **figures.model_dump(),
        mode=draw(st.sampled_from(["hybrid", "tag", "faceted"])),
        order=draw(st.sampled_from(["relevance", "newest"])),
        note=draw(st.one_of(st.none(), texts)),
        memories=draw(st.lists(rows, max_size=6)),
    )


@settings(max_examples=400, derandomize=True, suppress_health_check=list(HealthCheck))
@given(pages())
def test_a_page_is_the_text_the_official_encoder_gives(page: SearchResult) -> None:
    result = toon_result(page)
    text = result.content[0].text
    assert text == toon_format.encode(result.structured_content)
    assert toon_format.decode(text) == result.structured_content
