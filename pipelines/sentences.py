"""Sentence splitting that keeps "Mr. Darcy", "Mrs. Bennet" and "p.m." whole.

NLTK's pre-trained English Punkt model knows English abbreviations, unlike LlamaIndex's default
untrained tokenizer; its data is what llama-index-core ships, found as LlamaIndex finds it
(`NLTK_DATA` if set, else its bundled copy). Two repairs on top of it: Punkt does not see an
abbreviation behind a curly quote or a dash ("“Mr.", "--Mr."), so sentences ending in a title
or an initial are joined to the next; and a piece that starts in lower case ("“Is it?” cried
she.") continues the sentence before it.
"""

from __future__ import annotations

import re
from functools import cache

from nltk.tokenize import PunktTokenizer

_ASCII_QUOTES = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})  # same length
_ENDS_IN_TITLE = re.compile(
    r"(?<![^\W_])(?:(?i:Mr|Mrs|Ms|Messrs|Mme|Mlle|Dr|St|Sr|Jr|Col|Capt|Gen|Rev|Prof|Edw)|[A-Z])\.$"
)
_CONTINUES = re.compile(r"^[\"'“‘(_\s]*[a-z;,:]")


@cache
def _punkt() -> PunktTokenizer:
    from llama_index.core.utils import globals_helper

    globals_helper.wait_for_nltk_check()  # puts LlamaIndex's NLTK data on `nltk.data.path`
    return PunktTokenizer("english")


def paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, each unwrapped onto one line."""
    return [" ".join(block.split()) for block in re.split(r"\n\s*\n", text) if block.strip()]


def split_sentences(paragraph: str) -> list[str]:
    """The sentences of one paragraph, in order, whitespace as in the paragraph."""
    spans: list[tuple[int, int]] = []
    for start, end in _punkt().span_tokenize(paragraph.translate(_ASCII_QUOTES)):
        previous = spans[-1] if spans else None
        if previous and (
            _ENDS_IN_TITLE.search(paragraph, previous[0], previous[1])
            or _CONTINUES.match(paragraph[start:end])
        ):
            spans[-1] = (previous[0], end)
        else:
            spans.append((start, end))
    return [paragraph[start:end] for start, end in spans]


def text_sentences(text: str) -> list[str]:
    """Every sentence of a text; a sentence never runs across a paragraph break."""
    return [sentence for block in paragraphs(text) for sentence in split_sentences(block)]
