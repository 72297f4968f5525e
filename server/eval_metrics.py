"""The figures of one question's ranked hits, and whether two runs differ by more than chance.

Each relevant entry counts once: a hit is credited to the first entry it matches that no
earlier hit was credited to, so two stored passages citing one relevant item count it once.
recall@k is the share of the entries credited among the first k hits, MRR 1 / the rank of the
first credited hit, nDCG@k the discounted gain of the credited hits (gain 1 each, log2
discount) over the best the entries allow. Two runs of one question file are compared
question by question with an exact (or, past 2^16 sign patterns, sampled) paired
permutation test of the mean difference.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, Field

EXACT_UP_TO = 16  # questions with a non-zero difference enumerated exactly (2^16 patterns)
SAMPLED_ROUNDS = 20_000  # sign patterns drawn past that


class RankFigures(BaseModel):
    hit: float
    recall: float
    mrr: float
    ndcg: float
    rank: int | None = Field(description="1-based rank of the first relevant hit; None: none.")


def credited(
    payloads: Sequence[dict[str, Any]],
    entries: Sequence[dict[str, Any]],
    matches: Callable[[dict[str, Any], dict[str, Any]], bool],
) -> list[int | None]:
    """For each hit, the entry it is credited to (each entry at most once), or None."""
    taken: set[int] = set()
    found: list[int | None] = []
    for payload in payloads:
        entry = next(
            (i for i, e in enumerate(entries) if i not in taken and matches(payload, e)), None
        )
        if entry is not None:
            taken.add(entry)
        found.append(entry)
    return found


def rank_figures(credit: Sequence[int | None], entries: int, k: int) -> RankFigures:
    """hit@k, recall@k, MRR and nDCG@k of the first k hits' credits (`credited`)."""
    first = credit[:k]
    ranks = [rank for rank, entry in enumerate(first, 1) if entry is not None]
    if not entries or not ranks:
        return RankFigures(hit=0.0, recall=0.0, mrr=0.0, ndcg=0.0, rank=None)
    dcg = sum(1 / math.log2(rank + 1) for rank in ranks)
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(entries, k) + 1))
    return RankFigures(
        hit=1.0,
        recall=len(ranks) / entries,
        mrr=1 / ranks[0],
        ndcg=dcg / ideal,
        rank=ranks[0],
    )


class Significance(BaseModel):
    metric: str
    questions: int = Field(description="Questions paired.")
    mean_difference: float = Field(description="Mean of (other - base).")
    p_value: float = Field(description="Two-sided: the chance of a mean difference this large.")
    method: str = Field(description="exact or sampled paired permutation (sign flips).")


def paired_permutation(
    base: Sequence[float], other: Sequence[float], metric: str = "", seed: int = 0
) -> Significance:
    """The paired permutation test of `other` against `base` (one value per question, in the
    same order): each question's difference keeps or flips its sign, every pattern equally
    likely under no difference; the p-value is the share of patterns whose mean difference is
    at least as far from zero as the one observed."""
    if len(base) != len(other):
        raise ValueError(f"paired runs differ in length: {len(base)} and {len(other)}")
    differences = [b - a for a, b in zip(base, other, strict=True)]
    moved = [d for d in differences if d != 0]
    observed = abs(sum(differences))
    mean = sum(differences) / len(differences) if differences else 0.0
    if not moved:
        return Significance(
            metric=metric,
            questions=len(differences),
            mean_difference=0.0,
            p_value=1.0,
            method="exact paired permutation",
        )
    tolerance = 1e-9 * max(1.0, observed)
    if len(moved) <= EXACT_UP_TO:
        patterns = itertools.product((1, -1), repeat=len(moved))
        extreme = sum(
            abs(sum(s * d for s, d in zip(signs, moved, strict=True))) >= observed - tolerance
            for signs in patterns
        )
        p_value, method = extreme / 2 ** len(moved), "exact"
    else:
        rng = random.Random(seed)
        extreme = sum(
            abs(sum(d if rng.random() < 0.5 else -d for d in moved)) >= observed - tolerance
            for _ in range(SAMPLED_ROUNDS)
        )
        p_value, method = (extreme + 1) / (SAMPLED_ROUNDS + 1), "sampled"
    return Significance(
        metric=metric,
        questions=len(differences),
        mean_difference=mean,
        p_value=p_value,
        method=f"{method} paired permutation",
    )


def compare_scores(base: Sequence[Any], other: Sequence[Any]) -> list[Significance]:
    """The paired test of each metric (hit, recall, MRR, nDCG) over the questions both runs
    scored that expect something (question scores, paired by line)."""
    after = {item.line: item for item in other if item.relevant}
    pairs = [(item, after[item.line]) for item in base if item.relevant and item.line in after]
    return [
        paired_permutation(
            [getattr(a, metric) for a, _ in pairs], [getattr(b, metric) for _, b in pairs], metric
        )
        for metric in ("hit", "recall", "mrr", "ndcg")
    ]
