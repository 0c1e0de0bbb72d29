"""relationship_agreement: a learned task matrix against the truth."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from explorer.compare.agreement import (
    RANK_RESOLUTION,
    UNRELATED_SHARE,
    TruthComparison,
    relationship_agreement,
)
from explorer.data import make_task_family


def _relation(seed: int, m: int = 8) -> np.ndarray:
    rng = np.random.default_rng(seed)
    signs = rng.choice([-1.0, 0.0, 1.0], size=(m, m))
    relation = np.triu(signs, 1)
    return relation + relation.T + np.eye(m)


def test_a_matrix_agrees_perfectly_with_itself_and_with_a_positive_multiple():
    data = make_task_family(relations=("related", "related", "negated", "unrelated"),
                            random_state=0)
    truth = data.truth["task_relation"]
    for estimate in (truth, 3.7 * truth):
        result = relationship_agreement(estimate, truth)
        assert result["sign_agreement"] == 1.0
        assert result["rank_correlation"] == pytest.approx(1.0)
        assert result["relative_error"] == pytest.approx(0.0, abs=1e-12)
        m = data.n_tasks
        assert result["n_pairs"] == m * (m - 1) and result["reason"] == ""


@pytest.mark.parametrize("relations", [
    ("related", "negated", "unrelated", "related", "relabelled"),
    ("related", "related", "negated", "unrelated"),
    ("related",) * 5 + ("unrelated",),
])
@pytest.mark.parametrize("seed", [0, 3])
def test_a_truth_of_cosines_agrees_exactly_with_itself(relations, seed):
    """Both sides are rounded and ranked the same way, so a matrix against itself (or a
    positive multiple) is a rank correlation of exactly 1, not 0.966-0.999 as when only the
    estimate was rounded before ranking (the true cosines of these families)."""
    similarity = make_task_family(relations, n_features=12,
                                  random_state=seed).truth["task_similarity"]
    assert relationship_agreement(similarity, similarity) == {
        "sign_agreement": 1.0, "rank_correlation": 1.0, "relative_error": 0.0,
        "n_pairs": len(relations) * (len(relations) + 1), "reason": ""}
    multiple = relationship_agreement(2.5 * similarity, similarity)
    assert multiple["rank_correlation"] == 1.0 and multiple["sign_agreement"] == 1.0
    assert multiple["relative_error"] == pytest.approx(0.0, abs=1e-12)
    rmtfl_like = np.random.default_rng(seed).normal(size=(12, 7))    # every entry compared
    assert relationship_agreement(rmtfl_like, rmtfl_like, entries="all") == {
        "sign_agreement": 1.0, "rank_correlation": 1.0, "relative_error": 0.0,
        "n_pairs": 84, "reason": ""}


def test_the_opposite_matrix_disagrees_everywhere():
    truth = _relation(1)
    result = relationship_agreement(-truth, truth)
    assert result["sign_agreement"] == 0.0
    assert result["rank_correlation"] == pytest.approx(-1.0)
    assert result["relative_error"] == pytest.approx(2.0)


def test_random_matrices_agree_at_chance():
    signs, ranks, errors = [], [], []
    for seed in range(200):
        truth = _relation(seed)
        estimate = np.random.default_rng(10_000 + seed).normal(size=truth.shape)
        result = relationship_agreement(estimate, truth)
        signs.append(result["sign_agreement"])
        ranks.append(result["rank_correlation"])
        errors.append(result["relative_error"])
    assert np.mean(signs) == pytest.approx(0.5, abs=0.03)
    assert np.mean(ranks) == pytest.approx(0.0, abs=0.03)
    assert np.mean(errors) == pytest.approx(np.sqrt(2.0), abs=0.05)


def test_the_rank_correlation_is_spearmans_with_ties():
    truth = _relation(3)
    estimate = np.round(np.random.default_rng(4).normal(size=truth.shape), 1)
    off = ~np.eye(truth.shape[0], dtype=bool)
    expected = spearmanr(estimate[off], truth[off]).statistic
    assert relationship_agreement(estimate, truth)["rank_correlation"] == pytest.approx(expected)


def test_one_truth_compared_with_many_estimates_gives_scipys_figures():
    # a live view's case: the truth prepared once (its ranks by sorting), every frame's
    # estimate ranked by counting its rounded values; checked against scipy's spearmanr
    rng = np.random.default_rng(5)
    truth = rng.normal(size=(30, 200)) * (rng.random((30, 200)) < 0.3)   # many tied zeros
    compare = TruthComparison(truth, entries="all")
    for noise in (0.1, 1.0, 10.0):
        estimate = truth + noise * rng.normal(size=truth.shape)
        # both sides rounded to RANK_RESOLUTION of their own largest magnitude, then ranked
        rounded = np.round(estimate / (RANK_RESOLUTION * np.abs(estimate).max()))
        rounded_truth = np.round(truth / (RANK_RESOLUTION * np.abs(truth).max()))
        result = compare.agreement(estimate)
        assert result["rank_correlation"] == pytest.approx(
            spearmanr(rounded.ravel(), rounded_truth.ravel()).statistic, abs=1e-12)
        signed = np.abs(truth) > UNRELATED_SHARE * np.abs(truth).max()
        assert result["sign_agreement"] == pytest.approx(
            np.mean(np.sign(estimate[signed]) == np.sign(truth[signed])))
        assert result == relationship_agreement(estimate, truth, entries="all")


def test_unknown_or_uninformative_truth_gives_nan_and_a_reason():
    estimate = np.eye(3) + 0.1
    unknown = relationship_agreement(estimate, None)
    assert all(np.isnan(unknown[k]) for k in ("sign_agreement", "rank_correlation",
                                              "relative_error"))
    assert unknown["reason"] == "the truth is unknown"
    unrelated = relationship_agreement(estimate, np.eye(3))
    assert np.isnan(unrelated["sign_agreement"]) and np.isnan(unrelated["rank_correlation"])
    assert "no related or negated pair" in unrelated["reason"]
    assert "constant off the diagonal" in unrelated["reason"]
    all_nan = relationship_agreement(estimate, np.full((3, 3), np.nan))
    assert all_nan["reason"] == "the truth is unknown"


def test_bad_shapes_are_refused_with_the_argument_named():
    with pytest.raises(ValueError, match="estimate must be a square"):
        relationship_agreement(np.ones((2, 3)), np.eye(2))
    with pytest.raises(ValueError, match=r"same shape; got \(2, 2\) and \(3, 3\)"):
        relationship_agreement(np.eye(2), np.eye(3))
    with pytest.raises(ValueError, match="estimate must be finite"):
        relationship_agreement(np.array([[1.0, np.nan], [0, 1]]), np.eye(2))


def test_near_equal_estimates_of_tied_truths_are_ties_not_an_ordering():
    """Hard clusters learned as probabilities 0.998 / 1.0: the estimate orders the pairs as
    the truth does, so the rank correlation is 1 (not dragged down by the 0.002s)."""
    same = np.eye(3)[[0, 0, 1, 1, 2, 2]]
    truth = same @ same.T
    rng = np.random.default_rng(0)
    estimate = np.clip(truth + 0.002 * rng.random(truth.shape), 0, 1)
    assert relationship_agreement(estimate, truth)["rank_correlation"] == pytest.approx(1.0)
    blurred = truth + 0.2 * rng.random(truth.shape)   # a real spread is still an ordering
    assert relationship_agreement(blurred, truth)["rank_correlation"] < 0.99
