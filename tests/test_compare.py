"""The comparison harness (issue 16): seeds, backends, tables, the t-test marking, CV,
relationships, the HTML report and argument validation."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import Ridge

from explorer.compare import ComparisonCancelled, ComparisonResult, compare, job_seeds, nmse
from explorer.compare.metrics import relationship_agreement
from explorer.data.synthetic import make_outlier_tasks
from explorer.models import L21MTFL, MultiTaskRidge, PerTaskEstimator


@pytest.fixture(scope="module")
def regression_data():
    return make_outlier_tasks(n_tasks=3, n_features=6, n_samples_per_task=24,
                              n_shared_features=2, n_outliers=1, noise=0.5, random_state=1)


def small_methods():
    return {"ridge": MultiTaskRidge(lambda_ridge=0.1),
            "l21": L21MTFL(lambda_rows=0.05),
            "stl": PerTaskEstimator(estimator=Ridge(alpha=1.0))}


def test_frame_is_tidy_and_matches_a_direct_fit(regression_data):
    calls = []
    result = compare(small_methods(), regression_data, n_trials=2, train_fraction=0.5,
                     progress=False, callback=lambda done, total: calls.append((done, total)))
    assert isinstance(result, ComparisonResult)
    frame = result.frame
    assert list(frame.columns) == ["method", "trial", "task", "metric", "value", "fit_time_s",
                                   "params"]
    # 3 methods x 2 trials x (3 tasks + average), one metric ("auto" -> nmse)
    assert len(frame) == 3 * 2 * 4 and set(frame["metric"]) == {"nmse"}
    assert calls == [(i, 6) for i in range(1, 7)]
    # Independent check of one cell: the same split and fit done by hand.
    split_seed, _ = job_seeds(0, 1, "ridge")
    train, test = regression_data.split(0.5, random_state=split_seed)
    model = MultiTaskRidge(lambda_ridge=0.1).fit(*train.arrays())
    predicted = model.predict(test.X, test.task)
    expected = np.mean([np.mean((test.y[test.task == t] - predicted[test.task == t]) ** 2)
                        / np.var(test.y[test.task == t]) for t in range(test.n_tasks)])
    assert nmse(test.y, predicted, test.task) == pytest.approx(expected, rel=1e-12)
    cell = frame.query("method == 'ridge' and trial == 1 and task == 'average'")["value"]
    assert cell.item() == pytest.approx(expected, rel=1e-12)
    table = result.table()
    assert list(table.index) == ["ridge", "l21", "stl"]
    assert list(table.columns) == [*regression_data.task_names, "average"]
    assert all("±" in cell for cell in table.to_numpy().ravel())


def test_progress_bar_on_stderr(regression_data, capsys):
    compare({"ridge": MultiTaskRidge()}, regression_data, n_trials=2, train_fraction=0.5)
    assert "compare" in capsys.readouterr().err
    compare({"ridge": MultiTaskRidge()}, regression_data, n_trials=2, train_fraction=0.5,
            progress=False)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("n_jobs, backend", [(1, "loky"), (2, "loky"), (2, "threading")])
def test_should_stop_cancels_between_jobs(regression_data, n_jobs, backend):
    done = []
    with pytest.raises(ComparisonCancelled) as info:
        compare(small_methods(), regression_data, n_trials=3, train_fraction=0.5,
                progress=False, callback=lambda d, t: done.append(d),
                should_stop=lambda: len(done) >= 2, n_jobs=n_jobs, backend=backend)
    assert (info.value.done, info.value.total) == (2, 9)
    assert done == [1, 2]
    # stopped before anything ran
    with pytest.raises(ComparisonCancelled, match="after 0 of 9"):
        compare(small_methods(), regression_data, n_trials=3, train_fraction=0.5,
                progress=False, should_stop=lambda: True, n_jobs=n_jobs, backend=backend)


def test_params_column_is_json(regression_data):
    result = compare({"ridge": MultiTaskRidge()}, regression_data, n_trials=1,
                     train_fraction=0.5, progress=False,
                     param_grid={"ridge": {"lambda_ridge": [0.01, 10.0]}}, cv=3)
    chosen = {json.dumps(json.loads(p)) for p in result.frame["params"]}
    assert len(chosen) == 1 and json.loads(chosen.pop())["lambda_ridge"] in (0.01, 10.0)
    assert isinstance(result.frame, pd.DataFrame)
    assert np.isfinite(result.frame["value"]).all()


# ---------------------------------------------------------------------- backends and seeds
def _numbers(result):
    return result.frame.drop(columns="fit_time_s").reset_index(drop=True)


def test_same_seeds_same_results_for_every_backend(regression_data):
    from distributed import Client, LocalCluster

    kwargs = dict(n_trials=3, train_fraction=0.5, metric=["nmse", "amse"], random_state=7,
                  progress=False, param_grid={"ridge": {"lambda_ridge": [0.01, 1.0]}}, cv=3)
    reference = compare(small_methods(), regression_data, n_jobs=1, **kwargs)
    runs = {"loky, 2 jobs": compare(small_methods(), regression_data, n_jobs=2, **kwargs),
            "threading, 2 jobs": compare(small_methods(), regression_data, n_jobs=2,
                                         backend="threading", **kwargs)}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        done = []
        runs["dask"] = compare(small_methods(), regression_data, backend="dask",
                               client=client, callback=lambda d, t: done.append(d), **kwargs)
        assert done == list(range(1, 10))
        # a scheduler address works as well (the harness opens and closes its own client)
        runs["dask by address"] = compare(small_methods(), regression_data, backend="dask",
                                          client=cluster.scheduler_address, **kwargs)
        stopped = []
        with pytest.raises(ComparisonCancelled) as info:
            compare(small_methods(), regression_data, backend="dask", client=client,
                    callback=lambda d, t: stopped.append(d),
                    should_stop=lambda: len(stopped) >= 2, **kwargs)
        assert (info.value.done, stopped) == (2, [1, 2])
    for name, result in runs.items():
        pd.testing.assert_frame_equal(_numbers(result), _numbers(reference), check_exact=True,
                                      obj=name)
        assert result.table().equals(reference.table()), name
    # Another seed gives other splits (so the equality above is not vacuous).
    other = compare(small_methods(), regression_data, n_jobs=1, **{**kwargs,
                                                                    "random_state": 8})
    assert not np.allclose(other.frame["value"], reference.frame["value"])


# ---------------------------------------------------------------------- the t-test marking
def constructed_result(values: dict[str, list[float]], *, greater_is_better=False,
                       task="T0") -> ComparisonResult:
    """A result whose only task column and average both hold ``values`` per method."""
    rows = [(method, trial, column, "error_rate", value, 0.0, "{}")
            for method, trial_values in values.items()
            for trial, value in enumerate(trial_values) for column in (task, "average")]
    frame = pd.DataFrame(rows, columns=["method", "trial", "task", "metric", "value",
                                        "fit_time_s", "params"])
    return ComparisonResult(frame, methods=list(values), task_names=[task],
                            greater_is_better={"error_rate": greater_is_better})


def test_t_test_marking_agrees_with_scipy():
    from scipy.stats import ttest_rel

    best = [0.10, 0.12, 0.11, 0.13, 0.09, 0.12]
    tie = [0.11, 0.11, 0.13, 0.12, 0.10, 0.12]     # slightly worse mean, not significant
    loser = [0.16, 0.19, 0.15, 0.20, 0.14, 0.18]   # worse in every trial
    result = constructed_result({"best": best, "tie": tie, "loser": loser})
    p_tie, p_loser = ttest_rel(tie, best).pvalue, ttest_rel(loser, best).pvalue
    assert p_tie > 0.05 > p_loser   # the example has the intended shape
    summary = result.summary().set_index(["task", "method"])
    assert summary.at[("T0", "tie"), "p_value"] == pytest.approx(p_tie, rel=1e-12)
    assert summary.at[("T0", "loser"), "p_value"] == pytest.approx(p_loser, rel=1e-12)
    assert np.isnan(summary.at[("T0", "best"), "p_value"])
    marked = result.best()
    assert marked.loc[:, "T0"].to_dict() == {"best": True, "tie": True, "loser": False}
    assert marked.loc[:, "average"].to_dict() == {"best": True, "tie": True, "loser": False}
    table = result.table()
    assert table.at["tie", "T0"].endswith(" *") and not table.at["loser", "T0"].endswith("*")
    assert table.at["best", "T0"] == f"{np.mean(best):.3f} ± {np.std(best, ddof=1):.3f} *"
    # Higher is better: the same numbers read as accuracies flip the winner.
    flipped = constructed_result({"best": best, "tie": tie, "loser": loser},
                                 greater_is_better=True).best()
    assert flipped.loc[:, "T0"].to_dict() == {"best": False, "tie": False, "loser": True}
    # alpha decides: the tie's p-value (about 0.53) is below alpha 0.6.
    assert p_tie < 0.6
    assert not result.best(alpha=0.6).at["tie", "T0"]
    # One trial: no test is possible, only the best mean is marked.
    single = constructed_result({"best": best[:1], "tie": tie[:1], "loser": loser[:1]})
    assert single.best().loc[:, "T0"].to_dict() == {"best": True, "tie": False,
                                                    "loser": False}
    assert single.table().at["best", "T0"] == f"{best[0]:.3f} *"


def test_tables_render_in_markdown_html_and_latex():
    result = constructed_result({"a<b>&_c": [0.1, 0.2, 0.15], "plain": [0.3, 0.35, 0.4]},
                                task="x|y_z")
    markdown = result.to_markdown()
    assert markdown.splitlines()[0] == "| method | x\\|y_z | average |"
    assert "| a<b>&_c | **0.150 ± 0.050** | **0.150 ± 0.050** |" in markdown
    assert "| plain | 0.350 ± 0.050 | 0.350 ± 0.050 |" in markdown
    html = result.to_html()
    assert "<th>a&lt;b&gt;&amp;_c</th>" in html and "<b>" not in html
    assert html.count("<strong>") == 2 and "x|y_z" in html
    latex = result.to_latex()
    assert r"a<b>\&\_c & \textbf{0.150 $\pm$ 0.050} & \textbf{0.150 $\pm$ 0.050} \\" in latex
    assert latex.startswith(r"\begin{tabular}{lcc}") and r"x|y\_z" in latex
    assert result.to_csv().splitlines()[0] == "method,trial,task,metric,value,fit_time_s,params"


# ---------------------------------------------------------------------- inner CV
def test_inner_cv_picks_the_better_lambda():
    from explorer.data import MultiTaskDataset

    rng = np.random.default_rng(0)
    n, d, m = 40, 8, 3
    X = rng.normal(size=(m * n, d))
    task = np.repeat(np.arange(m), n)
    coef = rng.normal(size=(d, m))
    signal = np.einsum("ij,ji->i", X, coef[:, task])
    grid = {"ridge": {"lambda_ridge": [1e-3, 1e4]}}
    cases = {"signal": (signal + 0.01 * rng.normal(size=m * n), 1e-3),   # fit it
             "noise": (rng.normal(size=m * n), 1e4)}                      # shrink to the mean
    for name, (y, expected) in cases.items():
        data = MultiTaskDataset(X, y, task, kind="regression")
        result = compare({"ridge": MultiTaskRidge()}, data, n_trials=2, train_fraction=0.5,
                         param_grid=grid, cv=4, progress=False)
        chosen = {json.loads(p)["lambda_ridge"] for p in result.frame["params"]}
        assert chosen == {expected}, name
        # ...and the choice is the better one on the test split too.
        fixed = {str(lam): MultiTaskRidge(lambda_ridge=lam) for lam in (1e-3, 1e4)}
        plain = compare(fixed, data, n_trials=2, train_fraction=0.5, progress=False)
        averages = plain.values().mean(axis=1)
        assert averages.idxmin() == str(expected), name


def _tasks_with_a_tiny_one(rng, y_kind):
    """Three tasks of 40 rows and one of 10 (5 training rows at 50%: 5 folds of one row)."""
    from explorer.data import MultiTaskDataset

    sizes, d = (40, 40, 40, 10), 3
    task = np.repeat(np.arange(len(sizes)), sizes)
    X = rng.normal(size=(task.size, d))
    signal = np.einsum("ij,ji->i", X, rng.normal(size=(d, len(sizes)))[:, task])
    y = signal + 0.01 * rng.normal(size=task.size) if y_kind == "signal" else \
        rng.normal(size=task.size)
    return MultiTaskDataset(X, y, task, kind="regression")


def test_inner_cv_scores_the_pooled_out_of_fold_predictions():
    # one held-out row has variance 0: scored per fold, every candidate's nMSE was infinite
    # and the first of the grid won whatever it was
    from explorer.compare.harness import Job, _cv_score, cv_folds
    from explorer.compare.scoring import resolve_metrics

    data = _tasks_with_a_tiny_one(np.random.default_rng(1), "signal")
    train, _ = data.split(0.5, random_state=0)
    folds = cv_folds(train, 5, np.random.default_rng(0))
    np.testing.assert_array_equal(np.bincount(folds[train.task == 3], minlength=5), 1)
    job = Job(0, "ridge", MultiTaskRidge(), None, 0.5, tuple(resolve_metrics("nmse",
              "regression")), 5, 0)
    for lam in (1e-3, 1e4):
        out_of_fold = np.empty(train.n_samples)
        for k in range(5):
            held = folds == k
            model = MultiTaskRidge(lambda_ridge=lam).fit(train.X[~held], train.y[~held],
                                                         train.task[~held])
            out_of_fold[held] = model.predict(train.X[held], train.task[held])
        expected = nmse(train.y, out_of_fold, train.task)
        assert np.isfinite(expected)
        score = _cv_score(job, {"lambda_ridge": lam}, train, folds, 0, None)
        assert score == pytest.approx(-expected, rel=1e-12)
    grid = {"ridge": {"lambda_ridge": [1e4, 1e-3]}}   # the wrong one first
    result = compare({"ridge": MultiTaskRidge()}, data, n_trials=2, train_fraction=0.5,
                     param_grid=grid, cv=5, progress=False)
    assert {json.loads(p)["lambda_ridge"] for p in result.frame["params"]} == {1e-3}


def test_inner_cv_on_school_chooses_as_well_as_the_auto_rule():
    # the rMTFL paper's School data at 24% training, per-task splits: the CV-chosen trace
    # norm penalty is within 0.02 nMSE of the "auto" rule's (before the pooled scoring it
    # chose 1e-4 at 1.04-1.06 against 0.87), and both low-rank and robust MTFL beat ridge
    from explorer.data import load_school
    from explorer.models import RobustMTFL, TraceNormMTL

    school = load_school()
    grid = {"trace CV": {"lambda_trace": [10.0 ** k for k in range(-4, 4)]}}
    methods = {"trace CV": TraceNormMTL(), "trace auto": TraceNormMTL(),
               "rMTFL": RobustMTFL(), "ridge": MultiTaskRidge()}
    result = compare(methods, school, n_trials=1, train_fraction=0.24, param_grid=grid, cv=3,
                     random_state=0, progress=False)
    test_nmse = result.values("nmse").mean(axis=1)
    assert test_nmse["trace CV"] <= test_nmse["trace auto"] + 0.02, test_nmse
    assert json.loads(result.frame.query("method == 'trace CV'")["params"].iloc[0]) \
        != {"lambda_trace": 1e-4}
    assert max(test_nmse["trace CV"], test_nmse["rMTFL"]) < test_nmse["ridge"], test_nmse


# ---------------------------------------------------------------------- relationships
def test_relationships_are_the_mean_over_trials(regression_data):
    result = compare({"ridge": MultiTaskRidge(lambda_ridge=0.1), "stl": small_methods()["stl"]},
                     regression_data, n_trials=3, train_fraction=0.5, progress=False)
    by_hand = []
    for trial in range(3):
        train, _ = regression_data.split(0.5, random_state=job_seeds(0, trial, "ridge")[0])
        model = MultiTaskRidge(lambda_ridge=0.1).fit(*train.arrays())
        by_hand.append(model.task_relationships()["W"])
    averaged = result.relationships()
    assert set(averaged) == {"ridge"}          # the per-task baseline learns no task matrix
    np.testing.assert_allclose(averaged["ridge"]["W"], np.mean(by_hand, axis=0), rtol=1e-12)
    assert not np.allclose(by_hand[0], by_hand[1])   # the trials differ
    # the result pickles (the app ships it between processes)
    import pickle

    again = pickle.loads(pickle.dumps(result))
    pd.testing.assert_frame_equal(again.frame, result.frame)


def test_agreement_judges_each_trials_matrix_against_the_truth(regression_data):
    result = compare({"ridge": MultiTaskRidge(lambda_ridge=0.1), "stl": small_methods()["stl"]},
                     regression_data, n_trials=2, train_fraction=0.5, progress=False)
    table = result.agreement()
    assert list(table[["method", "key", "truth"]].itertuples(index=False, name=None)) == [
        ("ridge", "W", "coef")]                  # W (d, m) against the true coefficients
    by_hand = [relationship_agreement(result.relationships_by_trial[("ridge", t)]["W"],
                                      regression_data.truth["coef"], entries="all")
               for t in range(2)]
    for figure in ("sign_agreement", "rank_correlation", "relative_error"):
        assert table.loc[0, figure] == pytest.approx(np.mean([f[figure] for f in by_hand]))
    assert table.loc[0, "rank_correlation"] > 0.5 and table.loc[0, "n_trials"] == 2
    hidden = compare({"ridge": MultiTaskRidge()}, regression_data.relabel(truth={}),
                     n_trials=1, progress=False)
    assert hidden.agreement().empty             # no truth, nothing to judge against


# ---------------------------------------------------------------------- the HTML report
def test_the_report_of_a_result_is_standalone_and_offline(regression_data):
    import re

    from explorer.viz.comparison import comparison_plot, page_table_html, report_html

    result = compare({"ridge": MultiTaskRidge(lambda_ridge=0.1), "l21 <i>": L21MTFL()},
                     regression_data, n_trials=2, train_fraction=0.5, progress=False)
    text = report_html(result)
    assert re.findall(r"<script[^>]*\bsrc\s*=", text) == []
    assert re.findall(r"<link[^>]*>", text) == []
    assert page_table_html(result) in text           # the table, as the page shows it
    assert text.count("<div class=\"figure\">") == 3   # bars, A vs B, the matrices
    assert "Bokeh" in text and "l21 &lt;i&gt;" in text and "l21 <i>" not in text
    layout = comparison_plot(result, a="l21 <i>", b="ridge")
    assert len(layout) == len(regression_data.task_names) + 2


def test_over_many_tasks_the_bars_read_as_a_distribution_and_name_the_worst_tasks():
    """Issue 39: Compare on School drew a screen of small panels of its first 16 schools.
    Past MAX_BAR_PANELS tasks: the average, each method's distribution over the tasks (one
    box a method) and the worst tasks, named; the task matrices label every k-th task."""
    from explorer.data import make_task_family
    from explorer.viz.comparison import (
        MAX_BAR_PANELS,
        WORST_TASKS,
        comparison_plot,
        relationship_plot,
    )

    data = make_task_family(("related",) * (MAX_BAR_PANELS + 8), kind="regression",
                            n_samples_per_task=20, random_state=0)
    result = compare({"ridge": MultiTaskRidge(lambda_ridge=0.1), "l21": L21MTFL()}, data,
                     n_trials=2, train_fraction=0.5, progress=False)
    layout = comparison_plot(result)
    titles = [panel.opts.get().kwargs.get("title") for panel in layout]
    assert titles[0] == f"{data.n_tasks} tasks" and titles[1] == result.columns[-1]
    worst = [t for t in titles if str(t).startswith("worst: ")]
    assert len(worst) == WORST_TASKS and len(layout) == WORST_TASKS + 3   # + the scatter
    means = result.summary(result.metrics[0])
    by_task = means[means["task"] != result.columns[-1]].groupby("task")["mean"].mean()
    assert {t.removeprefix("worst: ") for t in worst} == set(by_task.nlargest(WORST_TASKS).index)
    matrices = relationship_plot(result)
    yticks = matrices[0].opts.get().kwargs["yticks"]
    assert 2 <= len(yticks) < data.n_tasks and yticks[0][1] == str(data.task_names[0])


# ---------------------------------------------------------------------- bad arguments
@pytest.mark.parametrize("change, message", [
    ({"metric": "rmse"}, r"metric must be one of .*got 'rmse'"),
    ({"metric": "error_rate"}, r"metric 'error_rate' needs classification data"),
    ({"backend": "spark"}, r"backend must be one of \['loky', 'threading', 'dask'\]; "
                           r"got 'spark'"),
    ({"estimators": {}}, r"estimators must be a non-empty dict .*got \{\}"),
    ({"n_trials": 0}, r"n_trials must be an integer >= 1; got 0"),
    ({"train_fraction": 1.0}, r"train_fraction must be a number in \(0, 1\); got 1.0"),
    ({"train_fraction": 0}, r"train_fraction must be a number in \(0, 1\); got 0"),
    ({"cv": 1}, r"cv must be an integer >= 2; got 1"),
    ({"n_jobs": 0}, r"n_jobs must be a positive integer or -1; got 0"),
    ({"param_grid": {"lasso": {"alpha": [1]}}}, r"param_grid keys must be methods"),
    ({"param_grid": {"ridge": {"alpha": [1]}}}, r"must name parameters of MultiTaskRidge"),
    ({"client": "tcp://x:1"}, r"client is only used with backend='dask'"),
    ({"callback": 3}, r"callback must be None or a callable; got 3"),
    ({"backend": "dask"}, r"client must be a distributed.Client or a scheduler address"),
    ({"random_state": -1}, r"random_state must be an integer >= 0; got -1"),
])
def test_bad_arguments_raise_value_errors_naming_them(regression_data, change, message):
    arguments = {"estimators": {"ridge": MultiTaskRidge()}, "dataset": regression_data,
                 "progress": False, **change}
    with pytest.raises(ValueError, match=message):
        compare(**arguments)


def test_to_code_reproduces_the_table(regression_data):
    from explorer.data.catalog import make_dataset

    data = make_dataset("outlier_tasks", {"n_tasks": 3, "n_features": 5,
                                          "n_shared_features": 2, "n_outliers": 1,
                                          "n_samples_per_task": 20}, random_state=4)
    estimators = {**small_methods(), "lasso-ish": L21MTFL(lambda_rows=np.float64(0.2))}
    result = compare(estimators, data, n_trials=2, train_fraction=0.5, random_state=3,
                     metric=["amse", "nmse"], param_grid={"ridge": {"lambda_ridge": np.array(
                         [0.01, 1.0])}}, cv=3, progress=False)
    code = result.to_code(
        "make_dataset('outlier_tasks', {'n_tasks': 3, 'n_features': 5, "
        "'n_shared_features': 2, 'n_outliers': 1, 'n_samples_per_task': 20}, "
        "random_state=4)", imports=["from explorer.data.catalog import make_dataset"])
    assert "Ridge(alpha=1.0)" not in code and "estimator=Ridge()" in code
    namespace: dict = {}
    exec(compile(code.replace("print(", "(lambda *a: None)("), "<shown code>", "exec"),
         namespace)
    again = namespace["result"]
    pd.testing.assert_frame_equal(_numbers(again), _numbers(result))
    assert again.to_markdown() == result.to_markdown()


# ---------------------------------------------------------------------- classification
def test_classification_metrics_match_independent_computations():
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score

    from explorer.data.synthetic import make_clustered_tasks
    from explorer.models import TLTF

    data = make_clustered_tasks(n_tasks=4, n_clusters=2, n_features=3, n_task_features=2,
                                n_samples_per_task=30, random_state=2)
    methods = {"stl": PerTaskEstimator(estimator=LogisticRegression()),
               "tltf": TLTF(n_clusters=2, max_iter=300, tol=1e-4)}
    result = compare(methods, data, n_trials=2, train_fraction=0.5, progress=False,
                     metric=["auto", "accuracy", "ap", "mean_ap", "p_at_3"])
    assert result.metrics == ["error_rate", "accuracy", "ap", "mean_ap", "p_at_3"]
    assert not result.greater_is_better["error_rate"] and result.greater_is_better["ap"]
    # Redo trial 1 of TL-TF by hand: same split, same seed, task features passed to fit.
    split_seed, seed = job_seeds(0, 1, "tltf")
    train, test = data.split(0.5, random_state=split_seed)
    model = TLTF(n_clusters=2, max_iter=300, tol=1e-4, random_state=seed).fit(
        *train.arrays(), task_features=train.task_features)
    scores = model.predict_proba(test.X, test.task)[:, 1]
    errors = [np.mean(model.predict(test.X[test.task == t], test.task[test.task == t])
                      != test.y[test.task == t]) for t in range(data.n_tasks)]
    positive = test.y == 1
    per_task_ap = [average_precision_score(positive[test.task == t], scores[test.task == t])
                   for t in range(data.n_tasks)]
    cells = result.frame.query("method == 'tltf' and trial == 1").set_index(
        ["metric", "task"])["value"]
    names = data.task_names
    np.testing.assert_allclose([cells[("error_rate", n)] for n in names], errors)
    np.testing.assert_allclose(cells[("error_rate", "average")], np.mean(errors))
    np.testing.assert_allclose(cells[("accuracy", "average")], 1 - np.mean(errors))
    np.testing.assert_allclose([cells[("ap", n)] for n in names], per_task_ap)
    np.testing.assert_allclose(cells[("mean_ap", "average")], np.mean(per_task_ap))
    np.testing.assert_allclose(cells[("ap", "average")],
                               average_precision_score(positive, scores))
    top3 = [np.mean(positive[test.task == t][np.argsort(-scores[test.task == t],
                                                        kind="stable")[:3]])
            for t in range(data.n_tasks)]
    np.testing.assert_allclose([cells[("p_at_3", n)] for n in names], top3)
    assert set(result.relationships()["tltf"]) >= {"phi", "similarity"}


def test_a_failing_job_names_itself(regression_data):
    class Broken(MultiTaskRidge):
        def fit(self, X, y, task, **kwargs):
            raise FloatingPointError("solver blew up")

    with pytest.raises(FloatingPointError, match="solver blew up") as info:
        compare({"ok": MultiTaskRidge(), "broken": Broken()}, regression_data, n_trials=1,
                train_fraction=0.5, progress=False)
    assert "in compare: method 'broken', trial 0" in getattr(info.value, "__notes__", [])
