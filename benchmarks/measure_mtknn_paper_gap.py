"""How far MT-KNN's "paper" solver stops above the optimum (the figures in MTKNN's docstring).

For each setting and seed: ``MTKNN(solver="paper")`` at the paper's toy setting (k = 5,
lambda_asymmetry = lambda_ridge = 1; hinge loss) is fitted to the whole data set, then
:meth:`MTKNN.gap_to_optimum` runs the exact interior-point solver on the same neighbour
features and penalties to a relative duality gap of 1e-8 and reports
``(objective - optimum) / optimum``. Settings (``make_task_family``):

* ``app-defaults``: the app's opening data, the defaults of ``TaskFamilyParams`` (five related
  tasks and one unrelated one beside the base, 12 features, 24 examples per task), seeds
  7600-7611;
* ``opening-shaped``: relations (related, negated, unrelated, related, relabelled), 60
  examples per task, 2 features, seeds 7620-7627 and 7601;
* ``generator-defaults``: ``make_task_family()``'s defaults (related, negated, unrelated;
  100 examples per task, 2 features), seeds 7600-7611.

Prints one line per fit and a summary per setting (min, median, max); ``--json`` prints the
figures as one JSON object instead; ``--defaults`` fits at MTKNN's defaults instead (k = 10,
lambda_ridge = 10).

    PYTHONPATH=. python benchmarks/measure_mtknn_paper_gap.py [--json] [--defaults]
"""

import json
import sys
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from explorer.data import make_task_family
from explorer.data.catalog import TaskFamilyParams
from explorer.models import MTKNN


def app_defaults(seed):
    p = TaskFamilyParams()
    return make_task_family(p.relations, n_features=p.n_features,
                            n_samples_per_task=p.n_samples_per_task,
                            perturbation=p.perturbation, noise=p.noise, kind=p.kind,
                            random_state=seed)


def opening_shaped(seed):
    return make_task_family(("related", "negated", "unrelated", "related", "relabelled"),
                            n_samples_per_task=60, random_state=seed)


def generator_defaults(seed):
    return make_task_family(random_state=seed)


SETTINGS = {
    "app-defaults": (app_defaults, range(7600, 7612)),
    "opening-shaped": (opening_shaped, [*range(7620, 7628), 7601]),
    "generator-defaults": (generator_defaults, range(7600, 7612)),
}


#: The paper's toy setting (Section 4.1: k = 5, lambda1 = lambda2 = 1).
PAPER_TOY = {"n_neighbors": 5, "lambda_asymmetry": 1.0, "lambda_ridge": 1.0}


def relative_gap(data, params) -> float:
    model = MTKNN(solver="paper", **params).fit(*data.arrays())
    return float(model.gap_to_optimum()["relative_gap"])


def main():
    args = sys.argv[1:]
    as_json = "--json" in args
    params = {} if "--defaults" in args else PAPER_TOY
    warnings.simplefilter("ignore", ConvergenceWarning)
    report = {}
    for name, (make, seeds) in SETTINGS.items():
        gaps = {}
        for seed in seeds:
            gaps[seed] = relative_gap(make(seed), params)
            if not as_json:
                print(f"{name:18s} seed {seed}: {100 * gaps[seed]:.2f}% above the optimum",
                      flush=True)
        values = np.array(list(gaps.values()))
        report[name] = {"gaps": gaps, "min": float(values.min()),
                        "median": float(np.median(values)), "max": float(values.max())}
        if not as_json:
            print(f"{name}: {100 * values.min():.2f}-{100 * values.max():.1f}% (median "
                  f"{100 * np.median(values):.2f}%) over {values.size} seeds", flush=True)
    if as_json:
        print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
