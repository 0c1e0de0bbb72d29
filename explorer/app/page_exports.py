"""What a model page hands out: "Show code", the figures as one HTML file, the results as CSV.

:class:`PageExports` writes the Python that reproduces the page's numbers (the data, the
split, the model and the baselines with the page's settings, the fit and the per-task test
errors shown) and the tidy CSV of the last fit (:func:`~explorer.app.export.results_csv`),
behind the page's :class:`~explorer.app.export.PageTools`. Testable without a browser:
:meth:`PageExports.code` and :meth:`PageExports.results_csv` return text.
"""

from __future__ import annotations

from explorer.app.export import MATRIX_CODE, PageTools, dataset_code, results_csv
from explorer.compare.code import estimator_code, merged_imports

__all__ = ["PageExports"]


class PageExports:
    """The exports of one session's model page.

    Parameters
    ----------
    state : ExplorerState
    page : ModelPage
    params : param.Parameterized
        The page's settings.
    figures : callable () -> list
        The views and figures the HTML file holds, in order.
    fitted : callable () -> estimator or None
        The last finished fit's estimator.
    errors : callable () -> dict or None
        The per-task test errors shown (None before a fit).
    """

    def __init__(self, state, page, params, *, figures, fitted, errors):
        self.state, self.page, self.params = state, page, params
        self._fitted, self._errors = fitted, errors
        # Figures (HTML): each view's figures and caption (the agreement), then the errors
        self.tools = PageTools(page.slug, self.code, figures, self.results_csv,
                               has_results=lambda: errors() is not None)

    def refresh(self) -> None:
        """The buttons follow the page (results to download or not)."""
        self.tools.refresh()

    def code(self) -> str:
        """The Python that reproduces the page: the data, the split, the model and the
        baselines with the page's parameters, the fit and the per-task test errors shown."""
        state, train = self.state, self.state.train
        seed = int(state.init_seed)
        expression, imports = dataset_code(state)
        lines_import = {*imports, "import numpy as np"}
        estimator = self.page.make(self.params, seed, train)
        scored = hasattr(estimator, "score_per_task")
        features = ("task_features=train.task_features"
                    if getattr(estimator, "uses_task_features", False)
                    and train.task_features is not None else "")
        code_terms = self.page.hooks.code_terms
        setup, expressions = code_terms(self.params) if code_terms else ([], {})
        model = estimator_code(estimator, lines_import, expressions)
        body = [f"dataset = {expression}",
                f"train, test = dataset.split({float(state.train_fraction)!r}, "
                f"random_state={int(state.data_seed)})",
                *setup,
                f"model = {model}",
                f"model.fit(*train.arrays(){', ' + features if features else ''})",
                ("errors = {'model': 1 - model.score_per_task(*test.arrays())}" if scored
                 else "errors = {'model': per_task_error(model, test)}")]
        if not scored:
            lines_import.add("from explorer.app.kit import per_task_error")
        for name, make in self.page.baselines.items():
            baseline = estimator_code(make(self.params, seed, train), lines_import)
            body.append(f"errors[{name!r}] = 1 - {baseline}.fit(*train.arrays())"
                        ".score_per_task(*test.arrays())")
        body += ["for name, values in errors.items():   # per-task test error, as the page",
                 "    print(name, np.round(values, 3), 'mean', round(np.nanmean(values), 3))",
                 *MATRIX_CODE]
        return "\n".join([*merged_imports(lines_import), "", *body, ""])

    def results_csv(self) -> str | None:
        """Per-task test errors of the model and the baselines, and the model's learned task
        matrices, as one tidy CSV (:func:`~explorer.app.export.results_csv`; None before a
        fit)."""
        errors, fitted = self._errors(), self._fitted()
        if errors is None or fitted is None:
            return None
        train = self.state.train
        matrices = (dict(fitted.task_relationships())
                    if hasattr(fitted, "task_relationships") else {})
        return results_csv(errors, matrices, [str(n) for n in train.task_names],
                           [str(n) for n in train.feature_names])
