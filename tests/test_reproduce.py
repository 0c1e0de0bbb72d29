"""``python -m explorer reproduce``: the paper reproductions in fast mode (2 trials each).

Each reproduction runs once (module-scoped) through the CLI; the checks read its tidy CSV
and assert the substance: the signs of MT-KNN's W, the outlier tasks rMTFL finds, the
ordering of the methods the papers report where our data reproduce it.
"""

from __future__ import annotations

import contextlib
import io
import re

import numpy as np
import pandas as pd
import pytest

from explorer.__main__ import main
from explorer.compare.reproduce import FRAME_COLUMNS, REPRODUCTIONS, reproduce

NAMES = ["mtknn-toy", "rmtfl-outliers", "rmtfl-synthetic", "rmtfl-school", "rmtfl-path",
         "mtdt-criteria", "mtadaboost-digits", "mtboost-digits", "tltf-synthetic"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """name -> (exit code, printed text, tidy frame read back from --out)."""
    cache = {}

    def run(name):
        if name not in cache:
            path = tmp_path_factory.mktemp(name) / "r.csv"
            out = io.StringIO()   # capsys is function-scoped; the runs are shared
            with contextlib.redirect_stdout(out):
                code = main(["reproduce", name, "--fast", "--trials", "2", "--out", str(path)])
            cache[name] = (code, out.getvalue(), pd.read_csv(path) if path.exists() else None)
        return cache[name]

    return run


def test_list_names_every_reproduction(capsys):
    assert main(["reproduce", "--list"]) == 0
    out = capsys.readouterr().out
    assert set(NAMES) <= set(REPRODUCTIONS)
    for name in NAMES:
        line = next(line for line in out.splitlines() if line.startswith(name + " "))
        assert len(line.split(None, 1)[1]) > 20   # a description follows the name


def test_bad_name_exits_2_listing_the_names(capsys):
    assert main(["reproduce", "no-such-paper"]) == 2
    err = capsys.readouterr().err
    assert "no-such-paper" in err and all(name in err for name in NAMES)
    with pytest.raises(ValueError, match="mtknn-toy"):
        reproduce("no-such-paper")


def test_bad_trials_exit_2(capsys):
    assert main(["reproduce", "mtknn-toy", "--trials", "0"]) == 2
    assert "trials" in capsys.readouterr().err


@pytest.mark.parametrize("name", NAMES)
def test_runs_fast_prints_table_paper_and_note(runs, name):
    code, text, frame = runs(name)
    assert code == 0
    assert "paper" in text.lower() and "Note:" in text
    numeric_rows = [line for line in text.splitlines()
                    if len(re.findall(r"[-+]?\d+\.\d+", line)) >= 2]
    assert len(numeric_rows) >= 2                      # a table of numbers
    assert frame is not None and len(frame) > 0
    assert list(frame.columns) == FRAME_COLUMNS
    assert (frame["reproduction"] == name).all()
    assert set(frame["trial"]) == {0, 1}
    assert np.isfinite(frame["value"].to_numpy(dtype=float)).all()


def _mean(frame, **where):
    rows = np.ones(len(frame), dtype=bool)
    for column, value in where.items():
        rows &= frame[column].to_numpy() == value
    assert rows.any(), where
    return float(frame.loc[rows, "value"].mean())


def test_mtknn_toy_w_has_the_signs_of_the_truth(runs):
    frame = runs("mtknn-toy")[2]
    for p in ("20%", "40%"):
        related, negated = f"related p={p}", f"negated p={p}"
        for entry in ("w11", "w12", "w21", "w22"):
            assert _mean(frame, setting=related, task=entry) > 0
        for entry in ("w11", "w22"):
            assert _mean(frame, setting=negated, task=entry) > 0
        for entry in ("w12", "w21"):
            assert _mean(frame, setting=negated, task=entry) < 0
        # related tasks lend each other most of their own weight
        assert _mean(frame, setting=related, task="w12") > \
            0.5 * _mean(frame, setting=related, task="w11")


def test_rmtfl_outliers_found_exactly_on_the_easy_setting(runs):
    frame = runs("rmtfl-outliers")[2]
    easy = frame[frame["setting"].str.startswith("easy")]
    per_trial = easy.pivot(index="trial", columns="metric", values="value")
    assert (per_trial["zero_columns_Q"] == per_trial["true_zero_columns"]).all()
    assert (per_trial["outlier_set_exact"] == 1).all()
    # the paper's lambdas on the paper's data: about the paper's 21 zero columns (truth 20)
    paper = frame[frame["setting"] == "Sec. 6.1 data, paper lambdas"]
    assert abs(_mean(paper, metric="zero_columns_Q") - 20) <= 2


def test_rmtfl_synthetic_rmtfl_beats_per_task_ridge_and_lasso(runs):
    frame = runs("rmtfl-synthetic")[2]
    for setting in ("train 20%", "train 30%"):
        rows = frame[(frame["setting"] == setting) & (frame["task"] == "average")]
        nmse = rows[rows["metric"] == "nmse"].groupby("method")["value"].mean()
        assert nmse["rMTFL"] < nmse["ridge"] and nmse["rMTFL"] < nmse["lasso"]


def test_rmtfl_school_prints_each_ratio_beside_table_2(runs):
    from explorer.compare.reproduce_school import SCHOOL_PAPER

    code, text, frame = runs("rmtfl-school")
    methods = ["ridge", "lasso", "trace", "L1,2", "RMTL", "rMTFL"]
    for ratio in (0.16, 0.24, 0.32):
        label = f"{ratio:.0%}"
        ours = next(line for line in text.splitlines()
                    if line.startswith("nMSE") and f" {label} " in line)
        assert "ours" in ours and len(re.findall(r"\d\.\d{4} ± \d\.\d{4}", ours)) == 6
        paper = text.splitlines()[text.splitlines().index(ours) + 1]
        assert paper.split() == ["paper", *(f"{v:.4f}" for v in SCHOOL_PAPER["nmse"][ratio])]
        assert f"{label} ours: " in text and f"{label} paper: " in text
        rows = frame[(frame["setting"] == f"train {label}") & (frame["task"] == "average")]
        nmse = rows[rows["metric"] == "nmse"].groupby("method")["value"].mean()
        assert sorted(nmse.index) == sorted(methods)
        # as in the paper: low rank and robust feature learning both beat per-task ridge
        assert nmse["trace"] < nmse["ridge"] and nmse["rMTFL"] < nmse["ridge"]
    per_task = frame[(frame["task"] != "average") & (frame["metric"] == "nmse")]
    assert per_task["task"].nunique() == 139
    assert "This run: best" in text and "DirtyMTL and SLR" in text


def test_rmtfl_path_note_says_what_the_run_found(runs):
    """The sweep of lambda2: outlier recall rises to 1 along the grid, and the Note's CV
    choice, truth's best, their distance in grid steps and in value, and the figures at both
    are the run's own (recomputed here from the tidy CSV)."""
    _, text, frame = runs("rmtfl-path")
    note = " ".join(text.split("Note:")[1].split())
    grid = frame[frame["metric"] == "lambda_columns"].groupby("setting")["value"].first()
    grid = grid.sort_values(ascending=False)              # the path: lambda_max down
    top = grid.iloc[0]

    def curve(metric):
        return (frame[frame["metric"] == metric].groupby("setting")["value"].mean()
                .reindex(grid.index).to_numpy())

    recall = curve("outliers:recall")
    assert recall[0] == 0.0 and recall[-1] == 1.0 and np.all(np.diff(recall) >= 0)
    choices = frame.loc[frame["metric"] == "cv_choice"].sort_values("trial")["value"]
    assert len(choices) == 2 and set(choices) <= set(grid)
    counts = [int(np.sum(choices.to_numpy() == v)) for v in grid]
    i_cv = int(np.argmax(counts))                          # ties: the first (largest)
    i_best = int(np.nanargmin(curve("agreement:W:relative_error")))
    cv, best = grid.iloc[i_cv], grid.iloc[i_best]
    steps = abs(i_cv - i_best)
    if steps == 0:
        assert f"coincide: lambda2 = {cv:.4g} ({cv / top:.3g} lambda2_max)" in note
    else:
        assert f"are {steps} grid step{'s' if steps > 1 else ''} apart" in note
        assert f"CV picks lambda2 = {cv:.4g} ({cv / top:.3g} lambda2_max), " \
               f"{max(cv, best) / min(cv, best):.2f} times " \
               f"{'larger' if cv > best else 'smaller'} than the truth's best {best:.4g} " \
               f"({best / top:.3g} lambda2_max)" in note
    error = curve("agreement:W:relative_error")
    assert f"({error[i_best]:.3f}; {error[i_cv]:.3f} at CV's choice)" in note
    nmse = curve("test_error")
    assert f"test nMSE {nmse[i_cv]:.3f}; at the truth's best" in note
    assert f"The lowest test nMSE is at {grid.iloc[int(np.argmin(nmse))] / top:.3g}" in note
    table = text.split("paper:")[0].splitlines()
    marked = {line.split()[0]: line.split()[-1] for line in table
              if line.rstrip().endswith((" CV", " truth", " CV + truth"))}
    expected = ({f"{cv / top:.3g}": "truth"} if steps == 0 else     # "CV + truth" ends so
                {f"{cv / top:.3g}": "CV", f"{best / top:.3g}": "truth"})
    assert marked == expected


def test_mtdt_ig_m_not_far_below_the_single_task_tree(runs):
    frame = runs("mtdt-criteria")[2]
    accuracy = frame[frame["task"] == "average"].groupby("method")["value"].mean()
    assert set(accuracy.index) == {"C4.5", "IG_J", "IG_U", "IG_M"}
    assert accuracy["IG_M"] >= accuracy["C4.5"] - 0.03
    assert accuracy.min() > 0.75          # 10% label noise caps accuracy near 0.9


def test_mtadaboost_digits_accurate_and_not_below_adaboost(runs):
    frame = runs("mtadaboost-digits")[2]
    accuracy = frame[frame["task"] == "average"].groupby("method")["value"].mean()
    assert accuracy["MT-Adaboost"] > 0.8 and accuracy["Adaboost"] > 0.8
    assert accuracy["MT-Adaboost"] >= accuracy["Adaboost"] - 0.05


def test_mtboost_digits_every_method_far_better_than_chance(runs):
    frame = runs("mtboost-digits")[2]
    error = frame[frame["task"] == "average"].groupby("method")["value"].mean()
    assert set(error.index) == {"AnyBoost", "MTRL", "MTBoost", "MTBoost, Omega = I/m"}
    assert (error < 0.2).all()


def test_mtboost_digits_note_says_the_order_is_reversed_and_why_with_the_runs_numbers(runs):
    """The paper has MTBoost best; on scikit-learn's digit pairs it is worst. The Note says
    so, with the run's averages, and what the run shows: the learned Omega couples the
    unrelated tasks, and the same boosting with Omega fixed at I/m does far better."""
    _, text, frame = runs("mtboost-digits")
    error = frame[frame["task"] == "average"].groupby("method")["value"].mean()
    note = " ".join(text.split("Note:")[1].split())
    assert error["MTBoost"] > max(error["AnyBoost"], error["MTRL"])     # reversed, here
    assert error["MTBoost, Omega = I/m"] < error["MTBoost"] / 1.5          # Omega is the cost
    assert "The order is reversed against the paper" in note
    # the Note's numbers are the run's, to their 4 printed digits (a mean ending in 5 at the
    # fifth digit may print either way with another summation order: pandas 2.0 and 3)
    number = r"(\d+\.\d+)"
    said = re.search(rf"here MTBoost's is {number}, against AnyBoost {number}, MTRL {number}",
                     note)
    fixed = re.search(rf"the same boosting's average error is {number}", note)
    assert said and fixed, note
    for text, name in zip((*said.groups(), fixed.group(1)),
                          ("MTBoost", "AnyBoost", "MTRL", "MTBoost, Omega = I/m"), strict=True):
        assert abs(float(text) - error[name]) <= 0.5e-4 + 1e-9, (name, text, error[name])
    coupling = float(re.search(r"mean \|off-diagonal\| ([\d.]+)", note).group(1))
    share = float(re.search(r"Omega holds (\d+)% of its trace", note).group(1))
    assert coupling > 0.2 and share > 40          # far from I/m's 0 and 20%


def test_tltf_transfers_from_task_features_better_than_stl(runs):
    _, text, frame = runs("tltf-synthetic")
    mean_ap = frame[frame["metric"] == "mean_ap"].groupby("method")["value"].mean()
    assert mean_ap["TL-TF"] > mean_ap["STL"]
    assert mean_ap["TL-TF"] > mean_ap["TL-MC"]     # the task features are what helps
    # the Note says whether every transfer variant is at or above STL, as in the paper
    note = " ".join(text.split("Note:")[1].split())
    below = [m for m in ("TL-SC", "TL-MC", "TL-Comb", "TL-TF") if mean_ap[m] < mean_ap["STL"]]
    assert ("Unlike the paper" in note) == bool(below)
    assert all(f"{m} (" in note for m in below)
