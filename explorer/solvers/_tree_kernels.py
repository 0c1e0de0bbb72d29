"""Compiled (numba, ``cache=True``) kernels of :mod:`explorer.solvers.tree_split`.

No Python objects inside; the callers in ``tree_split`` validate and shape the inputs.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["_histogram_kernel", "_partition_kernel", "_split_kernel", "_xlx", "_xlx_table"]


@njit(cache=True, nogil=True)
def _xlx(c):
    return c * np.log2(c) if c > 0.0 else 0.0


@njit(cache=True, nogil=True)
def _xlx_table(n):  # pragma: no cover - compiled
    """``_xlx(k)`` for k = 0 .. n: the x log x of whole counts (unit example weights)."""
    table = np.empty(n + 1)
    for k in range(n + 1):
        table[k] = _xlx(float(k))
    return table


@njit(cache=True, nogil=True)
def _xlx_of(c, table):  # pragma: no cover - compiled
    """``_xlx(c)``, read from ``table`` (:func:`_xlx_table`) when c is a whole number in it
    (the same value: the table holds ``_xlx`` of the same float)."""
    if c < table.size:
        k = int(c)
        if k == c:
            return table[k]
    return _xlx(c)


@njit(cache=True, nogil=True)
def _node_terms(node_counts, offsets):
    """Per task: weighted count ``n_j``, ``sum_c xlx(c)`` and ``A_j = xlx(n_j) - sum_c
    xlx(c)`` over the task's (task, label) columns; and ``sum_c xlx(c)`` over all columns."""
    m = offsets.size - 1
    node_sum = np.zeros(m)
    node_xlx = np.zeros(m)
    a_node = np.zeros(m)
    for j in range(m):
        s = 0.0
        x = 0.0
        for c in range(offsets[j], offsets[j + 1]):
            s += node_counts[c]
            x += _xlx(node_counts[c])
        node_sum[j] = s
        node_xlx[j] = x
        a_node[j] = _xlx(s) - x
    joint_xlx = 0.0
    for c in range(node_counts.size):
        joint_xlx += _xlx(node_counts[c])
    return node_sum, node_xlx, a_node, joint_xlx


@njit(cache=True, nogil=True)
def _split_kernel(X_t, sorted_rows, columns, column_task, weights, offsets, node_counts,
                  min_leaf, xlx_table):  # pragma: no cover - compiled
    """Best (feature, position) under IG_M, IG_J, IG_U (in that order) for one node.

    Walks every feature's sorted rows once, keeping the left counts of all ``(task,
    label)`` columns and per task the running sums of ``x log x`` over its columns (one
    column changes per example); at each boundary between distinct values it evaluates
    the per-task gains ``(A_j - A_jL - A_jR) / n_j``. Ties go to
    the lower feature, then the lower position, as in the NumPy search (up to round-off of
    the running sums, ~1e-13, which can only reorder exactly tied splits).

    A boundary costs O(1) on continuous data, not O(m): only the tasks that moved get new
    gains, IG_M is compared with the best only through those tasks (see the comment in
    the loop), and IG_U is kept as a running sum, summed again over all tasks in task
    order (the value compared and stored, so ties fall as before) only where it may beat
    the best. On 100 tasks x 200 features (``bench_app``'s largest tree) this took the
    root's step, presort included, from ~390 ms to ~130 ms and the fit from 2.6 s to 0.8 s
    (``bench_mtdt.py``). ``xlx_table`` is :func:`_xlx_table` (whole counts, as with unit
    weights, skip the logarithm).
    """
    d, n = sorted_rows.shape
    m = offsets.size - 1
    K = node_counts.size
    node_sum, node_xlx, a_node, joint_xlx = _node_terms(node_counts, offsets)
    n_total = node_sum.sum()
    a_joint = _xlx(n_total) - joint_xlx
    best_feature = np.zeros(3, np.int64)
    best_position = np.zeros(3, np.int64)
    best_score = np.full(3, -np.inf)
    best_ig_j = np.zeros(3)
    best_gain = np.zeros((3, m))
    left = np.zeros(K)
    left_seen = np.zeros(K)
    left_sum = np.zeros(m)
    left_xlx = np.zeros(m)
    right_xlx = np.zeros(m)
    gain = np.zeros(m)
    dirty = np.zeros(m, np.bool_)
    dirty_tasks = np.zeros(m, np.int64)
    column_dirty = np.zeros(K, np.bool_)
    dirty_columns = np.zeros(K, np.int64)
    for f in range(d):
        left[:] = 0.0
        left_seen[:] = 0.0
        left_sum[:] = 0.0
        left_xlx[:] = 0.0
        right_xlx[:] = node_xlx
        gain[:] = 0.0
        dirty[:] = False
        column_dirty[:] = False
        n_dirty = 0
        n_dirty_tasks = 0
        ig_u_running = 0.0
        total_left_xlx = 0.0
        total_right_xlx = joint_xlx
        n_left = 0.0
        next_value = X_t[f, sorted_rows[f, 0]]
        for i in range(n - 1):
            r = sorted_rows[f, i]
            value = next_value
            next_value = X_t[f, sorted_rows[f, i + 1]]
            c = columns[r]
            w = weights[r]
            left[c] += w
            left_sum[column_task[c]] += w
            n_left += w
            if not column_dirty[c]:
                column_dirty[c] = True
                dirty_columns[n_dirty] = c
                n_dirty += 1
            if next_value <= value:
                continue
            # x log x sums refreshed only for the columns that moved since the last
            # boundary: one per example on continuous data, few on discrete data.
            for k in range(n_dirty):
                cc = dirty_columns[k]
                column_dirty[cc] = False
                t = column_task[cc]
                old = left_seen[cc]
                new = left[cc]
                left_seen[cc] = new
                delta = _xlx_of(new, xlx_table) - _xlx_of(old, xlx_table)
                left_xlx[t] += delta
                total_left_xlx += delta
                old_right = node_counts[cc] - old
                new_right = node_counts[cc] - new
                delta = (_xlx_of(new_right if new_right > 0.0 else 0.0, xlx_table)
                         - _xlx_of(old_right if old_right > 0.0 else 0.0, xlx_table))
                right_xlx[t] += delta
                total_right_xlx += delta
                if not dirty[t]:
                    dirty[t] = True
                    dirty_tasks[n_dirty_tasks] = t
                    n_dirty_tasks += 1
            n_dirty = 0
            if i + 1 < min_leaf or n - i - 1 < min_leaf:
                continue
            # Only tasks that gained examples since the last boundary change their gain.
            # IG_M: a task that did not move kept a gain that was part of an earlier
            # boundary's IG_M, which the best already covers; so only the moved tasks can
            # lift IG_M above the best, and where one does, its gain is IG_M.
            ig_m = 0.0
            for k in range(n_dirty_tasks):
                t = dirty_tasks[k]
                dirty[t] = False
                ls = left_sum[t]
                rs = node_sum[t] - ls
                rs = rs if rs > 0.0 else 0.0
                g = (a_node[t] - (_xlx_of(ls, xlx_table) - left_xlx[t])
                     - (_xlx_of(rs, xlx_table) - right_xlx[t])) / node_sum[t]
                g = g if g > 0.0 else 0.0
                ig_u_running += g - gain[t]
                gain[t] = g
                if g > ig_m:
                    ig_m = g
            n_dirty_tasks = 0
            # The running sum only tells whether IG_U may beat the best; the value used is
            # summed in task order, as a full pass would.
            ig_u = ig_u_running
            if ig_u_running >= best_score[2] - 1e-9 * (1.0 + abs(best_score[2])):
                ig_u = 0.0
                for t in range(m):
                    ig_u += gain[t]
                ig_u_running = ig_u
            n_right = n_total - n_left
            n_right = n_right if n_right > 0.0 else 0.0
            ig_j = (a_joint - (_xlx_of(n_left, xlx_table) - total_left_xlx)
                    - (_xlx_of(n_right, xlx_table) - total_right_xlx)) / n_total
            for k in range(3):
                score = ig_m if k == 0 else (ig_j if k == 1 else ig_u)
                if score > best_score[k]:
                    best_score[k] = score
                    best_feature[k] = f
                    best_position[k] = i
                    best_ig_j[k] = ig_j
                    best_gain[k, :] = gain
    return best_feature, best_position, np.concatenate((best_score, best_ig_j)), best_gain


@njit(cache=True, nogil=True)
def _histogram_kernel(rank, rows, columns, column_task, weights, offsets, node_counts,
                      n_bins, min_leaf, hist, count, xlx_table):  # pragma: no cover - compiled
    """As :func:`_split_kernel`, from per-node (feature, value, column) histograms.

    One pass over the node's rows fills the histograms (no sorting); each boundary between
    consecutive values is then scored from the cumulated counts. ``position`` is the index
    of the last value going left, ``upper`` the index of the next value present in the
    node (the threshold lies between the two).

    ``hist`` (d, max bins, K) and ``count`` (d, max bins) are scratch arrays, all zero on
    entry and left all zero (only the entries the node's rows touched are reset, so a
    small node costs its size, not the histogram's). ``xlx_table`` is
    :func:`_xlx_table` (whole counts, as with unit weights, skip the logarithm).
    """
    d = rank.shape[1]
    m = offsets.size - 1
    K = node_counts.size
    for i in range(rows.size):
        r = rows[i]
        c = columns[r]
        w = weights[r]
        for f in range(d):
            g = rank[r, f]
            hist[f, g, c] += w
            count[f, g] += 1
    node_sum, _, a_node, joint_xlx = _node_terms(node_counts, offsets)
    n_total = node_sum.sum()
    a_joint = _xlx(n_total) - joint_xlx
    best_feature = np.zeros(3, np.int64)
    best_position = np.zeros(3, np.int64)
    best_upper = np.zeros(3, np.int64)
    best_score = np.full(3, -np.inf)
    best_ig_j = np.zeros(3)
    best_gain = np.zeros((3, m))
    left = np.zeros(K)
    # x log x of each column's left / right count, and per task the sums over its columns,
    # refreshed only where a value moved rows (the same sums in the same order as from
    # scratch, so the same gains to the last bit)
    left_xlx = np.zeros(K)
    right_xlx = np.zeros(K)
    right_start = np.zeros(K)
    for c in range(K):
        right_start[c] = _xlx_of(node_counts[c], xlx_table)
    task_ls = np.zeros(m)
    task_lx = np.zeros(m)
    task_rx = np.zeros(m)
    dirty = np.zeros(m, np.bool_)
    gain = np.zeros(m)
    n = rows.size
    for f in range(d):
        left[:] = 0.0
        left_xlx[:] = 0.0
        right_xlx[:] = right_start
        dirty[:] = True
        n_left_rows = 0
        last_present = 0
        for g in range(n_bins[f] - 1):
            if count[f, g] == 0:
                continue
            last_present = g
            for c in range(K):
                h = hist[f, g, c]
                if h != 0.0:
                    left[c] += h
                    left_xlx[c] = _xlx_of(left[c], xlx_table)
                    right = node_counts[c] - left[c]
                    right_xlx[c] = _xlx_of(right if right > 0.0 else 0.0, xlx_table)
                    dirty[column_task[c]] = True
            n_left_rows += count[f, g]
            upper = g + 1
            if count[f, g + 1] == 0:
                # The next value is absent from this node: find the next present one.
                nxt = g + 1
                while nxt < n_bins[f] and count[f, nxt] == 0:
                    nxt += 1
                if nxt == n_bins[f]:
                    continue
                upper = nxt
            if n_left_rows == n:
                continue
            if n_left_rows < min_leaf or n - n_left_rows < min_leaf:
                continue
            ig_u = 0.0
            ig_m = 0.0
            total_left_xlx = 0.0
            total_right_xlx = 0.0
            n_left = 0.0
            for j in range(m):
                if node_sum[j] <= 0.0:
                    continue
                if dirty[j]:
                    dirty[j] = False
                    ls = 0.0
                    lx = 0.0
                    rx = 0.0
                    for c in range(offsets[j], offsets[j + 1]):
                        ls += left[c]
                        lx += left_xlx[c]
                        rx += right_xlx[c]
                    rs = node_sum[j] - ls
                    rs = rs if rs > 0.0 else 0.0
                    task_ls[j] = ls
                    task_lx[j] = lx
                    task_rx[j] = rx
                    value = (a_node[j] - (_xlx_of(ls, xlx_table) - lx)
                             - (_xlx_of(rs, xlx_table) - rx)) / node_sum[j]
                    gain[j] = value if value > 0.0 else 0.0
                total_left_xlx += task_lx[j]
                total_right_xlx += task_rx[j]
                n_left += task_ls[j]
                ig_u += gain[j]
                if gain[j] > ig_m:
                    ig_m = gain[j]
            n_right = n_total - n_left
            n_right = n_right if n_right > 0.0 else 0.0
            ig_j = (a_joint - (_xlx_of(n_left, xlx_table) - total_left_xlx)
                    - (_xlx_of(n_right, xlx_table) - total_right_xlx)) / n_total
            for k in range(3):
                score = ig_m if k == 0 else (ig_j if k == 1 else ig_u)
                if score > best_score[k]:
                    best_score[k] = score
                    best_feature[k] = f
                    best_position[k] = last_present
                    best_upper[k] = upper
                    best_ig_j[k] = ig_j
                    best_gain[k, :] = gain
    for i in range(rows.size):
        r = rows[i]
        c = columns[r]
        for f in range(d):
            g = rank[r, f]
            hist[f, g, c] = 0.0
            count[f, g] = 0
    return (best_feature, best_position, np.concatenate((best_score, best_ig_j)), best_gain,
            best_upper)


@njit(cache=True, nogil=True)
def _partition_kernel(sorted_rows, goes_left, left, right):  # pragma: no cover - compiled
    for f in range(sorted_rows.shape[0]):
        a = 0
        b = 0
        for i in range(sorted_rows.shape[1]):
            r = sorted_rows[f, i]
            if goes_left[r]:
                left[f, a] = r
                a += 1
            else:
                right[f, b] = r
                b += 1


@njit(cache=True, nogil=True)
def _first_at_least(values, f, k, v):  # pragma: no cover - compiled
    """Index of the first of the sorted ``values[f, :k]`` that is >= v (k when none)."""
    lo = 0
    hi = k
    while lo < hi:
        mid = (lo + hi) // 2
        if values[f, mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, nogil=True)
def _slot(keys, f, bits, shift, mask):  # pragma: no cover - compiled
    """The slot of ``bits`` in feature f's open-addressing table ``keys[f]`` (its own, or
    the empty one where it would go): Fibonacci hashing, the product's top bits (a float's
    low mantissa bits are often all zero)."""
    at = ((bits * _GOLDEN) >> shift) & mask
    while keys[f, at] != _EMPTY and keys[f, at] != bits:
        at = (at + 1) & mask
    return at


#: Marks an empty slot of :func:`_value_bins`' tables (the bits of a NaN; X is finite).
_EMPTY = -1
#: 2^64 / golden ratio, as a signed 64-bit integer (the product wraps around).
_GOLDEN = -7046029254386353131


@njit(cache=True, nogil=True)
def _value_bins(X, max_bins):  # pragma: no cover - compiled
    """Per feature: sorted distinct values and each row's index among them.

    ``X`` in C order. Returns ``(ok, rank (n, d) int32, values (d, width), n_bins (d,))``;
    ``ok`` is False (and the rest unfilled) as soon as a feature has more than ``max_bins``
    values. Reads X row by row (its memory order) twice, each value looked up by its bits
    in a small hash table per feature: the first pass inserts new values into the
    feature's sorted list (so continuous data stop after a few rows), the second reads
    every value's index from the table.
    """
    n, d = X.shape
    bits_of = X.view(np.int64)
    size_bits = 2
    while (1 << size_bits) < 4 * (max_bins + 1):
        size_bits += 1
    size = 1 << size_bits
    shift = 64 - size_bits
    mask = size - 1
    keys = np.full((d, size), _EMPTY, np.int64)
    slot_rank = np.zeros((d, size), np.int32)
    distinct = np.empty((d, max_bins + 1))
    n_bins = np.zeros(d, np.int64)
    rank = np.empty((n, d), np.int32)
    for i in range(n):
        for f in range(d):
            bits = bits_of[i, f]
            at = _slot(keys, f, bits, shift, mask)
            if keys[f, at] == bits:
                continue
            keys[f, at] = bits
            v = X[i, f]
            k = n_bins[f]
            pos = _first_at_least(distinct, f, k, v)
            if pos < k and distinct[f, pos] == v:  # another zero's sign
                continue
            if k == max_bins:
                return False, rank, distinct[:, :max_bins], n_bins
            for g in range(k, pos, -1):
                distinct[f, g] = distinct[f, g - 1]
            distinct[f, pos] = v
            n_bins[f] = k + 1
    key_values = keys.view(np.float64)
    for f in range(d):
        for at in range(size):
            if keys[f, at] != _EMPTY:
                slot_rank[f, at] = _first_at_least(distinct, f, n_bins[f], key_values[f, at])
    for i in range(n):
        for f in range(d):
            rank[i, f] = slot_rank[f, _slot(keys, f, bits_of[i, f], shift, mask)]
    width = 1
    for f in range(d):
        width = max(width, n_bins[f])
    values = np.empty((d, width))
    for f in range(d):
        for g in range(width):
            values[f, g] = distinct[f, min(g, n_bins[f] - 1)]
    return True, rank, values, n_bins


@njit(cache=True, nogil=True)
def _split_rows_kernel(sorted_rows, X_t, feature, threshold, goes_left):
    # pragma: no cover - compiled
    """Mark the node's rows with ``X_t[feature, row] <= threshold`` in ``goes_left``
    (all False on entry and on return), then partition every sorted list stably."""
    rows = sorted_rows[0]
    n_left = 0
    for i in range(rows.size):
        r = rows[i]
        if X_t[feature, r] <= threshold:
            goes_left[r] = True
            n_left += 1
    left = np.empty((sorted_rows.shape[0], n_left), dtype=sorted_rows.dtype)
    right = np.empty((sorted_rows.shape[0], rows.size - n_left), dtype=sorted_rows.dtype)
    _partition_kernel(sorted_rows, goes_left, left, right)
    for i in range(rows.size):
        goes_left[rows[i]] = False
    return left, right


@njit(cache=True, nogil=True)
def _node_statistics(rows, columns, weights, offsets, active, parent_major,
                     purity):  # pragma: no cover - compiled
    """Per-node counts and the early-leaf decisions of Algorithm 1 (lines 2-6) in one pass.

    Returns ``counts`` (K,) weighted (task, label) counts, ``n_samples`` (m,) examples per
    task, ``task_weight`` (m,), ``major`` (m,) each task's first majority label code (the
    parent's when the task has no weight here) and ``reason`` (m,): 0 the task goes on,
    1 absent, 2 pure, 3 purity reached (active tasks only).
    """
    K = offsets[offsets.size - 1]
    m = offsets.size - 1
    counts = np.zeros(K)
    examples = np.zeros(K, np.int64)
    for i in range(rows.size):
        r = rows[i]
        c = columns[r]
        counts[c] += weights[r]
        examples[c] += 1
    n_samples = np.zeros(m, np.int64)
    task_weight = np.zeros(m)
    major = parent_major.copy()
    reason = np.zeros(m, np.int64)
    for j in range(m):
        labels = 0
        top = -1.0
        top_code = 0
        total = 0.0
        n = 0
        for c in range(offsets[j], offsets[j + 1]):
            total += counts[c]
            n += examples[c]
            if examples[c] > 0:
                labels += 1
            if counts[c] > top:
                top = counts[c]
                top_code = c - offsets[j]
        n_samples[j] = n
        task_weight[j] = total
        if total > 0.0:
            major[j] = top_code
        if active[j]:
            if labels == 0:
                reason[j] = 1
            elif labels == 1:
                reason[j] = 2
            elif purity < 1.0 and total > 0.0 and top / total >= purity:
                reason[j] = 3
    return counts, n_samples, task_weight, major, reason
