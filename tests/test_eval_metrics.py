"""`scoperag eval`'s figures: each relevant entry once, nDCG, and the paired permutation test."""

from __future__ import annotations

import math

import pytest

from scoperag.server.eval_metrics import credited, paired_permutation, rank_figures
from scoperag.server.evaluation import matches

# Darwin's Zea mays: height differences (eighths of an inch) of 15 crossed and self-fertilised
# pairs. Fisher (The Design of Experiments, 1935, §21) counts 1,726 of the 2^15 sign patterns
# with a sum at least as far from zero as the observed 314: two-sided p = 0.05267.
DARWIN = [49, -67, 8, 16, 6, 23, 28, 41, 14, 29, 56, 24, 75, 60, -48]


def test_the_permutation_test_agrees_with_fishers_count() -> None:
    test = paired_permutation([0.0] * len(DARWIN), [float(d) for d in DARWIN], "height")
    assert test.method == "exact paired permutation"
    assert test.p_value * 2**15 == pytest.approx(1726)
    assert test.mean_difference == pytest.approx(314 / 15)


def test_identical_runs_do_not_differ_and_a_large_shift_does() -> None:
    same = paired_permutation([0.2, 0.5, 1.0], [0.2, 0.5, 1.0])
    assert same.p_value == 1.0 and same.mean_difference == 0.0
    shifted = paired_permutation([0.0] * 40, [1.0] * 40)
    assert shifted.method == "sampled paired permutation" and shifted.p_value < 0.001


def test_two_hits_of_one_relevant_entry_count_it_once() -> None:
    hits = [{"tags": ["a"]}, {"tags": ["a"]}, {"tags": ["x"]}, {"tags": ["b"]}]
    entries = [{"tags": "a"}, {"tags": "b"}]
    credit = credited(hits, entries, matches)
    assert credit == [0, None, None, 1]
    at_two = rank_figures(credit, len(entries), 2)
    assert (at_two.hit, at_two.recall, at_two.mrr, at_two.rank) == (1.0, 0.5, 1.0, 1)
    at_four = rank_figures(credit, len(entries), 4)
    assert at_four.recall == 1.0
    ideal = 1 + 1 / math.log2(3)
    assert at_four.ndcg == pytest.approx((1 + 1 / math.log2(5)) / ideal)


def test_a_hit_matching_two_entries_is_credited_to_one_and_the_next_hit_to_the_other() -> None:
    hits = [{"tags": ["a", "b"]}, {"tags": ["a"]}]
    assert credited(hits, [{"tags": "a"}, {"tags": "b"}], matches) == [0, None]
    assert credited(hits, [{"tags": "b"}, {"tags": "a"}], matches) == [0, 1]
