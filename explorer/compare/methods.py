"""The methods the Compare page offers, declared once: which estimator, for which kind of data,
with which key hyper-parameters (:class:`CompareSettings`, also the page's URL keys).

From Python, :func:`chosen_estimators` turns settings into the ``estimators`` argument of
:func:`explorer.compare.compare`:

>>> sorted(chosen_estimators(CompareSettings(), "classification"))
['MT-DT (IG_M)', 'MT-KNN', 'Regularized MTL', 'single-task logistic']
>>> chosen_estimators(CompareSettings(max_depth=3), "classification")["MT-DT (IG_M)"]
MTDecisionTree(max_depth=3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import param
from sklearn.linear_model import LogisticRegression

from ..models import (
    L21MTFL,
    MTKNN,
    MTKR,
    TLTF,
    KernelRegressionPerTask,
    KNNPerTask,
    MTAdaBoost,
    MTBoost,
    MTDecisionTree,
    MultiTaskRidge,
    PerTaskEstimator,
    RegularizedMTL,
    RobustMTFL,
    SingleTaskTree,
)
from ..models.constraints import derived_from, estimator_from, from_constraint
from ..parameters import public_parameters

__all__ = ["METHODS", "CompareSettings", "Method", "chosen_estimators", "methods_for",
           "settings_shown", "with_methods"]


@dataclass(frozen=True)
class Method:
    """One offered method, declared once: its switch in :class:`CompareSettings` is made
    from it (``key``, ``label``, ``doc``, on or off by ``on``).

    Attributes
    ----------
    key : str
        Its switch in :class:`CompareSettings`.
    name : str
        Its name in tables and figures.
    kind : str
        "classification" or "regression".
    make : callable (settings) -> estimator, or an estimator class
        A class is built from the settings that declare they feed it
        (:func:`~explorer.models.constraints.estimator_from`); those are its ``hyper``.
    hyper : tuple of str, optional
        The settings it reads (the page shows them only when the method is chosen); by
        default those that feed ``make``'s class.
    task_features : bool
        Needs the data's task features.
    label, doc, on : the switch's label (default: ``name``), tooltip and default.
    """

    key: str
    name: str
    kind: str
    make: Callable[[Any], Any]
    hyper: tuple[str, ...] | None = None
    task_features: bool = False
    label: str = ""
    doc: str = ""
    on: bool = False
    estimator: type | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        if isinstance(self.make, type):   # built from the settings, as they declare
            estimator = self.make
            object.__setattr__(self, "estimator", estimator)
            object.__setattr__(self, "make", lambda settings: estimator_from(settings, estimator))

    def reads(self, settings: type[param.Parameterized]) -> tuple[str, ...]:
        """The names of the ``settings`` it reads (see ``hyper``)."""
        if self.hyper is not None or self.estimator is None:
            return self.hyper or ()
        return tuple(name for name in public_parameters(settings)
                     if any(owner is self.estimator
                            for owner, _ in derived_from(settings.param[name])))

    def switch(self) -> param.Boolean:
        """Its switch in the settings."""
        return param.Boolean(self.on, label=self.label or self.name, doc=self.doc)


C, R = "classification", "regression"

METHODS: tuple[Method, ...] = (
    Method("single_logistic", "single-task logistic", C,
           lambda s: PerTaskEstimator(estimator=LogisticRegression(max_iter=1000)),
           label="Single-task logistic regression", on=True,
           doc="One logistic regression per task (the baseline)."),
    Method("regularized", "Regularized MTL", C, RegularizedMTL, on=True,
           label="Regularized MTL (shared + own part)",
           doc="Evgeniou & Pontil: w_t = w_0 + v_t."),
    Method("single_tree", "single-task tree", C, SingleTaskTree, label="Single-task tree",
           doc="One C4.5-like tree per task (the trees' baseline)."),
    Method("mt_dt", "MT-DT (IG_M)", C, MTDecisionTree, on=True,
           label="MT-DT (multi-task tree)",
           doc="One tree for all tasks, splits by the IG_M criterion."),
    Method("mt_adaboost", "MT-AdaBoost", C,
           lambda s: estimator_from(s, MTAdaBoost, base=estimator_from(s, MTDecisionTree)),
           ("max_depth", "n_rounds"), label="MT-AdaBoost",
           doc="AdaBoost over multi-task trees (Faddoul et al. 2012)."),
    Method("mtboost", "MTBoost", C, MTBoost, label="MTBoost",
           doc="Boosting with a learned task covariance (Zhang & Yeung)."),
    Method("knn", "KNN per task", C, KNNPerTask, label="KNN per task",
           doc="Kernel-weighted KNN, one per task."),
    Method("mt_knn", "MT-KNN", C, MTKNN, on=True, label="MT-KNN",
           doc="KNN over all tasks' neighbours, task-pair weights learned."),
    Method("tltf", "TL-TF", C, TLTF, task_features=True, label="TL-TF (needs task features)",
           doc="Mixture of experts gated by task features (Yan & Zhang)."),
    Method("ridge", "ridge per task", R, MultiTaskRidge, on=True, label="Ridge per task",
           doc="Single-task ridge regression."),
    Method("l21", "L2,1 MTFL", R, L21MTFL, on=True, label="L2,1 MTFL (shared features)",
           doc="Group lasso on the rows of W: features all tasks share."),
    Method("rmtfl", "rMTFL", R, RobustMTFL, on=True, label="rMTFL (robust MTFL)",
           doc="W = P + Q: shared features and outlier tasks."),
    Method("kr", "kernel regression per task", R, KernelRegressionPerTask,
           label="Kernel regression per task", doc="Kernel-weighted neighbours, one per task."),
    Method("mt_kr", "MT-KR", R, MTKR, label="MT-KR", doc="Multi-task kernel regression."),
)

#: What the methods share: the number of trials and the key hyper-parameters, the
#: estimators' declarations narrowed to a teaching range.
_SHARED = {
    "n_trials": param.Integer(10, bounds=(1, 50), label="Trials (random splits)",
                              doc="How many random train/test splits every method is fitted "
                                  "on."),
    "lambda_deviation": from_constraint(RegularizedMTL, "lambda_deviation",
                                        bounds=(1e-3, 10.0), label="Regularized MTL: lambda",
                                        doc="lambda_deviation: how far tasks may leave w_0."),
    "max_depth": from_constraint(MTDecisionTree, "max_depth",
                                 also=[(SingleTaskTree, "max_depth")], default=6,
                                 bounds=(None, 20), label="Trees: max depth",
                                 doc="Depth limit of every tree (and of the boosted ones)."),
    "n_rounds": from_constraint(MTBoost, "n_rounds", also=[(MTAdaBoost, "n_estimators")],
                                default=30, bounds=(2, 200), label="Boosting rounds",
                                doc="Rounds of MT-AdaBoost and MTBoost."),
    "n_neighbors": from_constraint(MTKNN, "n_neighbors",
                                   also=[(MTKR, "n_neighbors"), (KNNPerTask, "n_neighbors"),
                                         (KernelRegressionPerTask, "n_neighbors")],
                                   bounds=(None, 50), label="Neighbours k",
                                   doc="Neighbours of the KNN and kernel-regression methods."),
    "n_clusters": from_constraint(TLTF, "n_clusters", bounds=(None, 10), label="TL-TF: experts",
                                  doc="Number of experts (task clusters) of TL-TF."),
}

#: What to compare: one switch per method (made from :data:`METHODS`), the number of trials
#: and the key hyper-parameters the methods share (URL keys ``compare.<name>``).
CompareSettings: type[param.Parameterized] = type("CompareSettings", (param.Parameterized,), {
    "__doc__": """What to compare: one switch per method (``Method.key``, made from
    :data:`METHODS`), the number of trials and the key hyper-parameters the methods share
    (URL keys ``compare.<name>``). A method of the other data kind is ignored; with no method
    of the data's kind chosen, that kind's defaults are used.""",
    "__module__": __name__,
    **{method.key: method.switch() for method in METHODS},
    **_SHARED,
    "log_scale": ("lambda_deviation",),
})


def with_methods(extra: Sequence[Method]) -> tuple[type[CompareSettings], tuple[Method, ...]]:
    """Settings with a switch per further method (``Method.key``, on by default: a user's
    own estimator is compared unless switched off) and the methods offered with them. A
    method whose key is already a setting is refused (the shipped keys stay as they are).

    >>> settings, offered = with_methods([Method("mine", "Mine", "regression",
    ...                                          lambda s: None)])
    >>> settings().mine, offered[-1].name, len(offered) == len(METHODS) + 1
    (True, 'Mine', True)
    """
    switches: dict[str, param.Parameter] = {}
    for method in extra:
        if method.key in CompareSettings.param:
            raise ValueError(f"method key {method.key!r} is already a Compare setting.")
        switches.setdefault(method.key, param.Boolean(
            True, label=method.name, doc=f"Your estimator {method.name} (its defaults)."))
    if not extra:
        return CompareSettings, METHODS
    settings = type("CompareSettingsWithModels", (CompareSettings,),
                    {**switches, "__doc__": CompareSettings.__doc__})
    return settings, (*METHODS, *extra)


def methods_for(kind: str, *, task_features: bool = True,
                methods: Sequence[Method] = METHODS) -> list[Method]:
    """The methods that can run on data of ``kind`` (with or without task features)."""
    return [m for m in methods if m.kind == kind and (task_features or not m.task_features)]


def settings_shown(settings: CompareSettings, kind: str | None, *,
                   task_features: bool = True, methods: Sequence[Method] = METHODS) -> set[str]:
    """The settings worth showing for data of ``kind`` (None: no data): the number of trials,
    the switches of the methods offered, and the hyper-parameters of the chosen ones.

    >>> sorted(settings_shown(CompareSettings(), "regression", task_features=False))
    ['kr', 'l21', 'mt_kr', 'n_trials', 'ridge', 'rmtfl']
    """
    offered = ([] if kind is None else
               methods_for(kind, task_features=task_features, methods=methods))
    used = {h for m in offered if getattr(settings, m.key) for h in m.reads(type(settings))}
    return {"n_trials", *(m.key for m in offered), *used}


def chosen_estimators(settings: CompareSettings, kind: str, *,
                      task_features: bool = True,
                      methods: Sequence[Method] = METHODS) -> dict[str, Any]:
    """Name -> unfitted estimator of every chosen method that suits the data.

    With none of the data's kind chosen, the kind's defaults (the switches' defaults)."""
    offered = methods_for(kind, task_features=task_features, methods=methods)
    chosen = [m for m in offered if getattr(settings, m.key)]
    if not chosen:
        chosen = [m for m in offered if type(settings).param[m.key].default]
    return {m.name: m.make(settings) for m in chosen}
