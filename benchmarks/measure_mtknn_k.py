"""MT-KNN's and MT-KR's number of neighbours k and ridge weight lambda_ridge: test error and
the learned W against the truth (the figures behind the defaults ``n_neighbors`` and
``lambda_ridge`` in :mod:`explorer.models.mtknn`).

For each setting, data seed, k in (5, 10, 15) and lambda_ridge in (1, 10): the data set built
as the app builds it (``make_dataset(name, params, random_state=seed)``, split 70/30 with the
same seed), MT-KNN (classification, hinge loss) or MT-KR (regression) at their other
defaults, fitted to a relative duality gap of 1e-6 as the page fits them, and the per-task
baseline at the same k (``KNNPerTask`` / ``KernelRegressionPerTask``). The error is the mean
over tasks of the per-task test error (1 - accuracy, or 1 - R^2), as the model pages show it.
Where the data have a true task relation (+1 related, -1 negated, 0 unrelated), also how far
W (each row divided by its diagonal, as the page shows it) lies from it: the mean absolute
difference over the off-diagonal entries. And the share of a training point's k neighbours
that come from its own task (the rest come from the others).

Settings:

* ``opening``: the app's opening data (``task_family`` at its defaults: a base task, five
  related and one unrelated, 12 features, 24 examples per task), seeds 0-59, and again on
  held-out seeds 1000-1059;
* ``opening-regression``: the same, ``kind="regression"`` (MT-KR), seeds 0-9;
* ``mixed``: relations (related, negated, unrelated, related, relabelled), 60 examples per
  task, 12 features, seeds 0-19;
* ``two-d``: the scenario "Neighbours from other tasks" (related, negated; 40 examples per
  task, 2 features), seeds 0-19;
* ``digits-ovr``, ``digits-pairs``, ``toy-pair``, ``diabetes``: the catalog's real data at
  their defaults, seeds 0-9.

Prints one line per setting, k and lambda_ridge; ``--json`` prints the figures as one JSON
object instead.

    PYTHONPATH=. python benchmarks/measure_mtknn_k.py [--json]
"""

import json
import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from explorer.data.catalog import make_dataset
from explorer.models import MTKNN, MTKR, KernelRegressionPerTask, KNNPerTask

K_VALUES = (5, 10, 15)
RIDGE_VALUES = (1.0, 10.0)
TRAIN_FRACTION = 0.7
MIXED = {"relations": "related,negated,unrelated,related,relabelled",
         "n_samples_per_task": 60}
TWO_D = {"relations": "related,negated", "n_samples_per_task": 40, "n_features": 2}

SETTINGS = {
    "opening": ("task_family", {}, range(60)),
    "opening (held-out seeds)": ("task_family", {}, range(1000, 1060)),
    "opening-regression": ("task_family", {"kind": "regression"}, range(10)),
    "mixed": ("task_family", MIXED, range(20)),
    "two-d": ("task_family", TWO_D, range(20)),
    "digits-ovr": ("digits_tasks", {}, range(10)),
    "digits-pairs": ("digits_tasks", {"protocol": "pairs"}, range(10)),
    "toy-pair": ("toy_pair", {}, range(10)),
    "diabetes": ("diabetes_tasks", {}, range(10)),
}


def errors(name, params, seed, k, ridge) -> tuple[float, float, float, float]:
    """(model, per-task baseline, W's distance to the truth (NaN without one), own-task share
    of the neighbours) at one seed, k and lambda_ridge."""
    data = make_dataset(name, params, random_state=seed)
    train, test = data.split(TRAIN_FRACTION, random_state=seed)
    regression = train.kind == "regression"
    model_class = MTKR if regression else MTKNN
    baseline_class = KernelRegressionPerTask if regression else KNNPerTask
    model = model_class(n_neighbors=k, lambda_ridge=ridge, tol=1e-6, max_iter=20000,
                        random_state=0)
    model.fit(train.X, train.y, train.task)
    baseline = baseline_class(n_neighbors=k, random_state=0).fit(train.X, train.y, train.task)
    truth = (data.truth or {}).get("task_relation")
    distance = np.nan
    if truth is not None:
        W = model.task_relationships()["W_normalised"]
        off = ~np.eye(W.shape[0], dtype=bool)
        distance = float(np.mean(np.abs(W - np.asarray(truth, dtype=float))[off]))
    nb, _ = model._training_neighbourhoods(train.X, train.task, np.random.default_rng(0))
    own = float(np.mean(nb.task == train.task[:, None]))
    return (1.0 - model.score(test.X, test.y, test.task),
            1.0 - baseline.score(test.X, test.y, test.task), distance, own)


def main():
    as_json = "--json" in sys.argv[1:]
    warnings.simplefilter("ignore", ConvergenceWarning)
    report = {}
    for setting, (name, params, seeds) in SETTINGS.items():
        report[setting] = {}
        for k in K_VALUES:
            for ridge in RIDGE_VALUES:
                values = np.array([errors(name, params, seed, k, ridge) for seed in seeds])
                model, baseline, distance, own = values.T
                row = {"seeds": f"{seeds[0]}-{seeds[-1]}", "model": float(model.mean()),
                       "per_task": float(baseline.mean()),
                       "model_wins": float(np.mean(model < baseline)),
                       "w_from_truth": float(distance.mean()),
                       "own_task_share": float(own.mean())}
                report[setting][f"k={k}, lambda_ridge={ridge:g}"] = row
                if not as_json:
                    print(f"{setting:24s} k={k:2d} lambda_ridge={ridge:2g}: model "
                          f"{row['model']:.4f}, per-task {row['per_task']:.4f}, model lower on "
                          f"{row['model_wins']:.0%} of seeds {row['seeds']}; W from truth "
                          f"{row['w_from_truth']:.3f}; own-task neighbours "
                          f"{row['own_task_share']:.0%}", flush=True)
    if as_json:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
