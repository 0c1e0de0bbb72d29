"""Pure numerical routines the estimators call (no estimator state)."""


def warm_up() -> None:
    """Compile (or load from numba's on-disk cache) every compiled kernel on tiny data.

    The app calls this at server start, off the event loop, so no user click pays for
    compilation: the tree split search (:func:`explorer.solvers.tree_split.warm_up`) and
    the MFISTA iteration of the rMTFL family (:func:`explorer.solvers.stacked_fista.warm_up`)
    and its block coordinate descent sweeps (:func:`explorer.solvers.block_cd.warm_up`), and
    MT-KNN's interior-point step and neighbour pass (:func:`explorer.solvers.task_weights.warm_up`),
    its row projection (:func:`explorer.solvers.task_weights_projected.warm_up`), TL-TF's
    per-row kernels (:func:`explorer.solvers.tltf_variational.warm_up`) and MTBoost's inner
    step (:func:`explorer.solvers.mtboost.warm_up`).
    """
    from . import (
        block_cd,
        mtboost,
        stacked_fista,
        task_weights,
        task_weights_projected,
        tltf_variational,
        tree_split,
    )

    tree_split.warm_up()
    stacked_fista.warm_up()
    block_cd.warm_up()
    task_weights.warm_up()
    task_weights_projected.warm_up()
    tltf_variational.warm_up()
    mtboost.warm_up()
