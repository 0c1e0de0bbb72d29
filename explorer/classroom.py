"""A class that predicts, then sees the truth: the store of classes and guesses, and scoring.

A teacher opens a class (:meth:`ClassStore.open_class`) and gets a short class code for the
students and a secret key for the teacher's own link. Each student locks a :class:`Guess` of
how the tasks relate (a tasks x tasks grid of +1 related, -1 negated, 0 unrelated, NaN
"don't know"; the outlier tasks; the shared features) before the truth is shown; the
teacher sees how many locked, pools the guesses (:func:`pooled_guess`), reveals the round to
the class and moves it on to the next scenario. Everything lives in a database that every
server process sees: SQLite in a file by default (:func:`default_db_path`), or any
SQLAlchemy URL (PostgreSQL for several servers behind one address).

What is safe about it:

* class codes carry 40 random bits (:data:`CODE_LENGTH` characters of an unambiguous
  base-32 alphabet), teacher keys 192 (``secrets.token_urlsafe(24)``); only the SHA-256 of a
  key is stored, compared in constant time (:func:`hmac.compare_digest`);
* everything a teacher may do needs the key; without it (or with a wrong one) a
  ``PermissionError`` and nothing of the class, not even whether it exists;
* a guess, a student id and a nickname are validated like every other input
  (``ValueError`` naming the argument, what was expected and what came); nicknames are
  stored as given and escaped by whoever shows them (:meth:`ClassStore.to_csv` defuses
  spreadsheet formulas);
* a student reads only their own guess (:meth:`ClassStore.guess_of`);
* a class and its guesses are deleted when the teacher ends it or past its expiry
  (``ttl_hours`` after it was opened, 24 by default; :meth:`ClassStore.purge_expired`).

Scoring a guess against a data set's truth: :func:`score_guess` (the agreement of
:func:`explorer.compare.agreement.relationship_agreement`, precision and recall of outliers
and features), :func:`most_wrong_pairs` for a class, :func:`where_wrong` in one sentence.

>>> import numpy as np
>>> truth = np.array([[1., 1, -1], [1, 1, -1], [-1, -1, 1]])
>>> guess = Guess(np.array([[1, 1, 1], [1, 1, np.nan], [1, np.nan, 1]]))
>>> score_guess(guess, {"task_relation": truth})["relation"]["sign_agreement"]
0.5
>>> where_wrong(guess, truth)
'You took T0-T2 as related; they are negated. (1 pair left open.)'
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from numbers import Integral, Real
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

# explorer.compare and explorer.data are imported where they are used: a process that only
# stores guesses (a server's worker, a student's lock) does without scikit-learn's import

__all__ = [
    "CLASS_DB_ENV", "CLASS_TTL_ENV", "CODE_ALPHABET", "CODE_LENGTH", "FRAME_COLUMNS",
    "MAX_FEATURE_GUESSES", "MAX_NICKNAME", "MAX_STUDENT_ID", "ClassState", "ClassStore",
    "Guess", "GuessRecord", "GuessRefused", "KeyRedactingFilter", "UnknownClass",
    "default_db_path", "most_wrong_pairs", "pooled_guess", "read_class", "redact_keys",
    "score_guess", "where_wrong",
]

#: Class codes: 32 characters without 0/O and 1/I (5 bits each), :data:`CODE_LENGTH` long.
CODE_ALPHABET = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"
CODE_LENGTH = 8   # 40 bits
#: A teacher key: ``secrets.token_urlsafe(KEY_BYTES)`` (192 bits).
KEY_BYTES = 24
#: At most this many features in a guess of the shared ones.
MAX_FEATURE_GUESSES = 50
MAX_NICKNAME = 40
MAX_STUDENT_ID = 64
MAX_SCENARIO = 100
#: A guess's JSON is refused past this many characters (200 tasks' grid fits in ~250 kB).
MAX_GUESS_JSON = 1_000_000
#: The environment variables :meth:`ClassStore.from_environment` reads (``python -m explorer
#: serve --class-db URL --class-ttl-hours H`` sets them for the app's processes).
CLASS_DB_ENV = "MTL_CLASS_DB"
CLASS_TTL_ENV = "MTL_CLASS_TTL_HOURS"
#: SQLite waits this long for another writer's lock before it gives up.
BUSY_TIMEOUT_S = 5.0

_STUDENT_ID = re.compile(rf"[A-Za-z0-9_-]{{1,{MAX_STUDENT_ID}}}")
_CODE = re.compile(rf"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_RELATION_WORD = {1: "related", -1: "negated", 0: "unrelated"}


def describe(value: Any) -> str:
    """A short, safe description of a received value for messages."""
    if isinstance(value, np.ndarray):
        return f"an array of shape {value.shape} and dtype {value.dtype}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class UnknownClass(LookupError):
    """No open class has this code (never opened, ended by the teacher, or expired)."""


class GuessRefused(RuntimeError):
    """The class's round is revealed: guesses are locked for good."""


# ---------------------------------------------------------------------- the guess
def _relation_matrix(value) -> np.ndarray:
    try:
        matrix = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("guess.relation must be a tasks x tasks matrix of numbers (+1, -1, 0 "
                         f"or NaN); got {describe(value)}.") from None
    matrix.setflags(write=False)
    return matrix


@dataclass(frozen=True, eq=False)
class Guess:
    """One student's guess of how the tasks relate, of the outlier tasks and of the shared
    features.

    Parameters
    ----------
    relation : array-like of shape (m, m)
        +1 related, -1 negated, 0 unrelated, NaN don't know; symmetric, diagonal 1.
    outliers : array-like of bool, shape (m,), optional
        The tasks guessed to be outliers.
    features : sequence of int, optional
        Indices of the features guessed to be shared (at most :data:`MAX_FEATURE_GUESSES`).

    Construction only converts (to a read-only float matrix, a bool vector, a tuple of ints);
    :meth:`validated` checks a guess against the class's number of tasks.
    """

    relation: np.ndarray
    outliers: np.ndarray | None = None
    features: tuple[int, ...] | None = None

    def __post_init__(self):
        object.__setattr__(self, "relation", _relation_matrix(self.relation))
        if self.outliers is not None:
            outliers = np.array(self.outliers)
            if outliers.dtype != bool:
                if (outliers.dtype.kind not in "iuf" or outliers.ndim != 1
                        or not np.isin(outliers, (0, 1)).all()):
                    raise ValueError("guess.outliers must be one true/false per task; got "
                                     f"{describe(self.outliers)}.")
                outliers = outliers.astype(bool)
            outliers.setflags(write=False)
            object.__setattr__(self, "outliers", outliers)
        if self.features is not None:
            features = self.features
            if isinstance(features, str | bytes) or not hasattr(features, "__iter__"):
                raise ValueError("guess.features must be a list of feature indices; got "
                                 f"{describe(features)}.")
            features = tuple(features)
            if len(features) > MAX_FEATURE_GUESSES:
                raise ValueError(f"guess.features must name at most {MAX_FEATURE_GUESSES} "
                                 f"features; got {len(features)}.")
            bad = [f for f in features
                   if isinstance(f, bool | np.bool_) or not isinstance(f, Integral)]
            if bad:
                raise ValueError("guess.features must be integer feature indices; got "
                                 f"{describe(bad[0])}.")
            object.__setattr__(self, "features", tuple(int(f) for f in features))

    def __eq__(self, other) -> bool:
        if not isinstance(other, Guess):
            return NotImplemented
        return (self.relation.shape == other.relation.shape
                and np.array_equal(self.relation, other.relation, equal_nan=True)
                and (self.outliers is None) == (other.outliers is None)
                and (self.outliers is None or np.array_equal(self.outliers, other.outliers))
                and self.features == other.features)

    __hash__ = None

    @property
    def n_tasks(self) -> int:
        """Rows of the relation grid."""
        return int(self.relation.shape[0]) if self.relation.ndim else 0

    def validated(self, n_tasks: int, n_features: int | None = None) -> Guess:
        """This guess, checked for a class of ``n_tasks`` tasks (and ``n_features`` features).

        Parameters
        ----------
        n_tasks : int
            The tasks of the class's scenario.
        n_features : int, optional
            The features of its data; feature indices are checked against it when given.

        Returns
        -------
        Guess
            ``self`` (its features sorted, when they were not).

        Raises
        ------
        ValueError
            Naming what was wrong: the shape, a value outside {+1, -1, 0, NaN}, an asymmetric
            pair, the diagonal, the outliers' size, too many, repeated or unknown features.

        >>> Guess([[1, -1], [-1, 1]]).validated(2).relation.tolist()
        [[1.0, -1.0], [-1.0, 1.0]]
        >>> Guess([[1, -1], [1, 1]]).validated(2)
        Traceback (most recent call last):
        ...
        ValueError: guess.relation must be symmetric; got -1.0 at (0, 1) but 1.0 at (1, 0).
        """
        r = self.relation
        if r.shape != (n_tasks, n_tasks):
            raise ValueError(f"guess.relation must have shape ({n_tasks}, {n_tasks}), one row "
                             f"and one column per task; got shape {r.shape}.")
        known = ~np.isnan(r)
        bad = known & ~np.isin(r, (1.0, -1.0, 0.0))
        if bad.any():
            i, j = np.argwhere(bad)[0]
            raise ValueError("guess.relation must hold +1 (related), -1 (negated), 0 "
                             f"(unrelated) or NaN (don't know); got {float(r[i, j])!r} at "
                             f"({i}, {j}).")
        diagonal = np.diagonal(r)
        if not np.array_equal(diagonal, np.ones(n_tasks)):
            i = int(np.flatnonzero(~(diagonal == 1.0))[0])
            raise ValueError(f"guess.relation must have 1 on the diagonal (a task is related to "
                             f"itself); got {float(diagonal[i])!r} at ({i}, {i}).")
        asymmetric = ~((r == r.T) | (np.isnan(r) & np.isnan(r.T)))
        if asymmetric.any():
            i, j = np.argwhere(asymmetric)[0]
            raise ValueError(f"guess.relation must be symmetric; got {float(r[i, j])!r} at "
                             f"({i}, {j}) but {float(r[j, i])!r} at ({j}, {i}).")
        if self.outliers is not None and self.outliers.shape != (n_tasks,):
            raise ValueError(f"guess.outliers must have one entry per task, shape ({n_tasks},); "
                             f"got shape {self.outliers.shape}.")
        if self.features is None:
            return self
        features = self.features
        if len(set(features)) != len(features):
            raise ValueError("guess.features must name each feature once; got "
                             f"{sorted({f for f in features if features.count(f) > 1})} "
                             "more than once.")
        high = n_features if n_features is not None else None
        outside = [f for f in features if f < 0 or (high is not None and f >= high)]
        if outside:
            where = f"0..{high - 1}" if high is not None else "0 or more"
            raise ValueError(f"guess.features must be feature indices in {where}; got "
                             f"{outside[0]}.")
        if list(features) != sorted(features):
            return Guess(self.relation, self.outliers, tuple(sorted(features)))
        return self

    def to_json(self) -> str:
        """The guess as JSON text (NaN as ``null``).

        >>> Guess([[1, np.nan], [np.nan, 1]], features=(2,)).to_json()
        '{"relation": [[1, null], [null, 1]], "outliers": null, "features": [2]}'
        """
        if self.relation.ndim != 2:
            raise ValueError(f"guess.relation must be a tasks x tasks matrix; got shape "
                             f"{self.relation.shape}.")
        relation = [[None if math.isnan(v) else int(v) if float(v).is_integer() else v
                     for v in row] for row in self.relation.tolist()]
        outliers = None if self.outliers is None else [bool(v) for v in self.outliers]
        features = None if self.features is None else list(self.features)
        return json.dumps({"relation": relation, "outliers": outliers, "features": features},
                          allow_nan=False)

    @classmethod
    def from_json(cls, text: str) -> Guess:
        """A guess from :meth:`to_json`'s text (not yet :meth:`validated`).

        Raises
        ------
        ValueError
            The text is too long, is no JSON, or is not a guess's object.
        """
        if not isinstance(text, str | bytes):
            raise ValueError(f"guess JSON must be text; got {describe(text)}.")
        if len(text) > MAX_GUESS_JSON:
            raise ValueError(f"guess JSON must be at most {MAX_GUESS_JSON:,} characters; got "
                             f"{len(text):,}.")
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"guess JSON is not valid JSON: {exc}.") from None
        if not isinstance(value, dict) or "relation" not in value or (
                set(value) - {"relation", "outliers", "features"}):
            raise ValueError('guess JSON must be an object with "relation" and optional '
                             f'"outliers", "features"; got {describe(value)}.')
        relation = value["relation"]
        if not isinstance(relation, list) or not all(isinstance(row, list) for row in relation):
            raise ValueError(f"guess.relation must be a list of rows; got {describe(relation)}.")
        relation = [[math.nan if v is None else v for v in row] for row in relation]
        if any(isinstance(v, bool) or not isinstance(v, Real) for row in relation for v in row):
            raise ValueError("guess.relation must hold numbers or null (don't know).")
        lengths = {len(row) for row in relation}
        if len(lengths) > 1:
            raise ValueError(f"guess.relation's rows must be of one length; got {sorted(lengths)}.")
        outliers = value.get("outliers")
        if outliers is not None and (not isinstance(outliers, list)
                                     or not all(isinstance(v, bool) for v in outliers)):
            raise ValueError(f"guess.outliers must be a list of true/false; got "
                             f"{describe(outliers)}.")
        features = value.get("features")
        if features is not None and not isinstance(features, list):
            raise ValueError(f"guess.features must be a list of feature indices; got "
                             f"{describe(features)}.")
        return cls(np.array(relation, dtype=np.float64).reshape(len(relation), -1)
                   if relation else np.zeros((0, 0)),
                   None if outliers is None else np.array(outliers, dtype=bool),
                   None if features is None else tuple(features))


# ---------------------------------------------------------------------- scoring
def _truth_signs(truth_relation, n_tasks: int, name: str = "truth_relation") -> np.ndarray:
    """The truth's signs, +1 / -1 / 0 (an entry within
    :data:`~explorer.compare.agreement.UNRELATED_SHARE` of the largest magnitude off the
    diagonal counts as 0, as in the agreement's sign)."""
    from explorer.compare.agreement import UNRELATED_SHARE

    truth = np.asarray(truth_relation, dtype=np.float64)
    if truth.shape != (n_tasks, n_tasks):
        raise ValueError(f"{name} must have shape ({n_tasks}, {n_tasks}) like the guess; got "
                         f"shape {truth.shape}.")
    off = ~np.eye(n_tasks, dtype=bool)
    scale = np.nanmax(np.abs(truth[off]), initial=0.0) if off.any() else 0.0
    signs = np.where(np.abs(truth) > UNRELATED_SHARE * scale, np.sign(truth), 0.0)
    return np.where(np.isnan(truth), np.nan, signs)


def _precision_recall(guessed: np.ndarray, true: np.ndarray) -> dict:
    hits = int(np.sum(guessed & true))
    n_guessed, n_true = int(guessed.sum()), int(true.sum())
    return {"precision": hits / n_guessed if n_guessed else float("nan"),
            "recall": hits / n_true if n_true else float("nan"),
            "n_guessed": n_guessed, "n_true": n_true}


def score_guess(guess: Guess, truth: dict) -> dict:
    """A guess against a data set's truth.

    Parameters
    ----------
    guess : Guess
        The student's guess.
    truth : dict
        The data set's truth (``task_relation``, ``outlier_tasks``, ``shared_features``; any
        may be missing).

    Returns
    -------
    dict
        ``"relation"``: :func:`~explorer.compare.agreement.relationship_agreement` of the
        guessed grid with ``truth["task_relation"]`` over the pairs guessed (NaN, don't know,
        left out): ``sign_agreement``, ``rank_correlation``, ``relative_error``,
        ``n_pairs`` (ordered pairs compared), ``reason``. ``"outliers"`` and ``"features"``
        (only when both the guess and the truth have them): ``precision``, ``recall``
        (NaN when nothing was guessed / nothing is true), ``n_guessed``, ``n_true``.

    >>> truth = {"task_relation": np.array([[1., -1], [-1, 1]]),
    ...          "outlier_tasks": np.array([False, True])}
    >>> s = score_guess(Guess([[1, -1], [-1, 1]], outliers=[True, True]), truth)
    >>> s["relation"]["sign_agreement"], s["outliers"]["precision"], s["outliers"]["recall"]
    (1.0, 0.5, 1.0)
    """
    from explorer.compare.agreement import relationship_agreement

    if not isinstance(guess, Guess):
        raise ValueError(f"guess must be a Guess; got {describe(guess)}.")
    truth = truth or {}
    g = guess.relation
    m = guess.n_tasks
    if g.shape != (m, m):
        raise ValueError(f"guess.relation must be square; got shape {g.shape}.")
    open_pairs = np.isnan(g)
    true_relation = truth.get("task_relation")
    if true_relation is not None:
        true_relation = np.array(true_relation, dtype=np.float64)
        if true_relation.shape != g.shape:
            raise ValueError(f"truth['task_relation'] must have the guess's shape {g.shape}; "
                             f"got {true_relation.shape}.")
        true_relation[open_pairs] = np.nan   # don't know: left out
    result = {"relation": relationship_agreement(np.where(open_pairs, 0.0, g), true_relation)}
    off = ~np.eye(m, dtype=bool)
    if true_relation is not None and m > 1 and open_pairs[off].all():
        result["relation"]["reason"] = "no pair was guessed"
    if guess.outliers is not None and truth.get("outlier_tasks") is not None:
        true = np.asarray(truth["outlier_tasks"], dtype=bool)
        if true.shape != guess.outliers.shape:
            raise ValueError(f"truth['outlier_tasks'] must have the guess's shape "
                             f"{guess.outliers.shape}; got {true.shape}.")
        result["outliers"] = _precision_recall(guess.outliers, true)
    if guess.features is not None and truth.get("shared_features") is not None:
        true = np.asarray(truth["shared_features"], dtype=bool)
        outside = [f for f in guess.features if not 0 <= f < true.size]
        if outside:
            raise ValueError(f"guess.features must be feature indices in 0..{true.size - 1}; "
                             f"got {outside[0]}.")
        guessed = np.zeros(true.shape, dtype=bool)
        guessed[list(guess.features)] = True
        result["features"] = _precision_recall(guessed, true)
    return result


def _relations(guesses: Sequence[Guess]) -> np.ndarray:
    guesses = list(guesses)
    if not guesses:
        raise ValueError("guesses must hold at least one Guess; got none.")
    bad = [g for g in guesses if not isinstance(g, Guess)]
    if bad:
        raise ValueError(f"guesses must be Guess objects; got {describe(bad[0])}.")
    shapes = {g.relation.shape for g in guesses}
    if len(shapes) > 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"guesses must all be of one (m, m) shape; got {sorted(shapes)}.")
    return np.stack([g.relation for g in guesses])


def pooled_guess(guesses: Sequence[Guess]) -> np.ndarray:
    """The class's mean guess, pair by pair, "don't know" left out.

    Parameters
    ----------
    guesses : sequence of Guess
        The students' guesses, all of one shape.

    Returns
    -------
    ndarray of shape (m, m)
        The mean over the students who guessed each pair; NaN where nobody did.

    >>> pooled_guess([Guess([[1, 1], [1, 1]]), Guess([[1, -1], [-1, 1]]),
    ...               Guess([[1, np.nan], [np.nan, 1]])]).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    stack = _relations(guesses)
    known = ~np.isnan(stack)
    counts = known.sum(axis=0)
    sums = np.where(known, stack, 0.0).sum(axis=0)
    pooled = np.full(stack.shape[1:], np.nan)
    np.divide(sums, counts, out=pooled, where=counts > 0)
    return pooled


def most_wrong_pairs(guesses: Sequence[Guess], truth_relation, k: int = 3
                     ) -> list[tuple[int, int, float]]:
    """The task pairs the class got most wrong.

    Parameters
    ----------
    guesses : sequence of Guess
        The students' guesses.
    truth_relation : array-like of shape (m, m)
        The true relation (its signs: +1, -1, 0 unrelated).
    k : int
        How many pairs at most.

    Returns
    -------
    list of (i, j, share)
        ``i < j``; ``share``: of all the students, those whose guess of the pair has the
        wrong sign ("don't know" is not wrong); worst first (ties in pair order), pairs
        nobody got wrong left out.

    >>> truth = np.array([[1., 1, 0], [1, 1, 0], [0, 0, 1]])
    >>> most_wrong_pairs([Guess([[1, 1, 1], [1, 1, 0], [1, 0, 1]]),
    ...                   Guess([[1, -1, 1], [-1, 1, 0], [1, 0, 1]])], truth)
    [(0, 2, 1.0), (0, 1, 0.5)]
    """
    stack = _relations(guesses)
    m = stack.shape[1]
    signs = _truth_signs(truth_relation, m)
    if isinstance(k, bool) or not isinstance(k, Integral) or k < 0:
        raise ValueError(f"k must be a whole number >= 0; got {describe(k)}.")
    wrong = ~np.isnan(stack) & ~np.isnan(signs) & (stack != signs)
    share = wrong.sum(axis=0) / stack.shape[0]
    i, j = np.triu_indices(m, 1)
    order = sorted(((-share[a, b], a, b) for a, b in zip(i, j, strict=True)
                    if share[a, b] > 0))
    return [(int(a), int(b), float(-s)) for s, a, b in order[:k]]


def _listed(items: list[str], more: int = 0) -> str:
    if more:
        return ", ".join(items) + f" and {more} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def where_wrong(guess: Guess, truth_relation, estimate=None, task_names=None) -> str:
    """One sentence (or two) on where the guess, and the model's estimate, went wrong.

    Parameters
    ----------
    guess : Guess
        The student's guess.
    truth_relation : array-like of shape (m, m)
        The true relation; its signs are compared (+1, -1, 0).
    estimate : array-like of shape (m, m), optional
        The model's learned task matrix: the signs of its symmetric part are compared on
        the pairs the truth calls related or negated.
    task_names : sequence of str, optional
        Names of the tasks (default ``T0``, ``T1``, ...).

    Returns
    -------
    str
        E.g. ``"You took T1-T3 as related; they are negated. The model got 5 of 6 pairs'
        signs right; it missed T0-T2."``

    >>> truth = np.array([[1., 1, -1], [1, 1, -1], [-1, -1, 1]])
    >>> where_wrong(Guess(truth), truth, estimate=np.eye(3) + 0.5)
    "You got all 3 pairs right. The model got 1 of 3 pairs' signs right; it missed T0-T2 \
and T1-T2."
    """
    if not isinstance(guess, Guess):
        raise ValueError(f"guess must be a Guess; got {describe(guess)}.")
    m = guess.n_tasks
    signs = _truth_signs(truth_relation, m)
    names = list(task_names) if task_names is not None else [f"T{i}" for i in range(m)]
    if len(names) != m:
        raise ValueError(f"task_names must have {m} names; got {len(names)}.")
    i, j = np.triu_indices(m, 1)
    pairs = [(a, b) for a, b in zip(i, j, strict=True) if not np.isnan(signs[a, b])]
    g = guess.relation
    guessed = [(a, b) for a, b in pairs if not np.isnan(g[a, b])]
    wrong = [(a, b) for a, b in guessed if g[a, b] != signs[a, b]]
    left_open = len(pairs) - len(guessed)
    if not guessed:
        sentences = ["You left every pair open."]
    elif not wrong:
        sentences = [f"You got all {len(guessed)} pairs right." if not left_open else
                     f"You got all {len(guessed)} pairs you guessed right."]
    elif len(wrong) == 1:
        a, b = wrong[0]
        sentences = [f"You took {names[a]}-{names[b]} as {_RELATION_WORD[int(g[a, b])]}; they "
                     f"are {_RELATION_WORD[int(signs[a, b])]}."]
    else:
        shown = [f"{names[a]}-{names[b]} as {_RELATION_WORD[int(g[a, b])]} (they are "
                 f"{_RELATION_WORD[int(signs[a, b])]})" for a, b in wrong[:3]]
        sentences = [f"You took {_listed(shown, len(wrong) - len(shown))}; "
                     f"{len(guessed) - len(wrong)} of {len(guessed)} pairs right."]
    if guessed and left_open:
        sentences.append(f"({left_open} pair{'s' if left_open > 1 else ''} left open.)")
    if estimate is not None:
        e = np.asarray(estimate, dtype=np.float64)
        if e.shape != (m, m):
            raise ValueError(f"estimate must have shape ({m}, {m}) like the guess; got shape "
                             f"{e.shape}.")
        e = (e + e.T) / 2.0
        signed = [(a, b) for a, b in pairs if signs[a, b] != 0]
        missed = [(a, b) for a, b in signed
                  if not (np.isfinite(e[a, b]) and np.sign(e[a, b]) == signs[a, b])]
        if not signed:
            sentences.append("The truth has no related or negated pair for the model's "
                             "signs.")
        elif not missed:
            sentences.append(f"The model got all {len(signed)} pairs' signs right.")
        else:
            names_missed = [f"{names[a]}-{names[b]}" for a, b in missed[:3]]
            sentences.append(f"The model got {len(signed) - len(missed)} of {len(signed)} "
                             f"pairs' signs right; it missed "
                             f"{_listed(names_missed, len(missed) - len(names_missed))}.")
    return " ".join(sentences)


# ---------------------------------------------------------------------- the store
def default_db_path() -> Path:
    """The SQLite file of the classes: ``$XDG_DATA_HOME`` (or ``~/.local/share``)
    ``/mtl-explorer/classes.sqlite``."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if base and Path(base).is_absolute() else Path.home() / ".local" / "share"
    return root / "mtl-explorer" / "classes.sqlite"


@dataclass(frozen=True)
class ClassState:
    """What anyone with the class code may know of a class: its round and whether the round
    is revealed (times in seconds since the epoch, as the store's clock gives them)."""

    code: str
    round: int
    scenario: str
    n_tasks: int
    revealed: bool
    created: float
    expires: float


@dataclass(frozen=True)
class GuessRecord:
    """A stored guess, as the teacher sees it."""

    student: str
    nickname: str
    round: int
    scenario: str
    guess: Guess
    locked_at: float


def _check_text(value, name: str, longest: int, *, empty: bool = True) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{name} must be text; got {describe(value)}.")
    if len(value) > longest:
        raise ValueError(f"{name} must be at most {longest} characters; got {len(value)}.")
    if not empty and not value.strip():
        raise ValueError(f"{name} must not be empty; got {value!r}.")
    if _CONTROL.search(value):
        raise ValueError(f"{name} must have no control characters; got {describe(value)}.")
    return value


def _check_student(student) -> str:
    if not isinstance(student, str) or not _STUDENT_ID.fullmatch(student):
        raise ValueError(f"student must be an id of 1 to {MAX_STUDENT_ID} letters, digits, '_' "
                         f"or '-' (the browser's random token); got {describe(student)}.")
    return student


def _check_n_tasks(n_tasks) -> int:
    from explorer.data.catalog import MAX_TASKS

    if isinstance(n_tasks, bool) or not isinstance(n_tasks, Integral) or not (
            2 <= n_tasks <= MAX_TASKS):
        raise ValueError(f"n_tasks must be a whole number in 2..{MAX_TASKS}; got "
                         f"{describe(n_tasks)}.")
    return int(n_tasks)


def _normal_code(code) -> str | None:
    """The code in capitals, or None when it cannot be a class code."""
    if not isinstance(code, str):
        return None
    code = code.strip().upper()
    return code if _CODE.fullmatch(code) else None


def _key_hash(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


_NO_KEY_HASH = _key_hash("no class has this key")
_NOT_TEACHER = ("this needs the teacher's key of an open class (the teacher's link); the key "
                "is missing or wrong, or the class has ended")


def _sqlalchemy_url(url) -> str:
    """A SQLAlchemy URL: None -> the default SQLite file; a path -> a SQLite file there."""
    if url is None:
        path = default_db_path()
    elif isinstance(url, os.PathLike) or "://" not in str(url):
        path = Path(url).expanduser()
    else:
        url = str(url)
        if url.startswith("sqlite:///") and len(url) > len("sqlite:///"):
            Path(url[len("sqlite:///"):]).expanduser().parent.mkdir(parents=True, exist_ok=True)
        return url
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path.resolve()}"


_stores: dict[tuple, ClassStore] = {}
_stores_lock = threading.Lock()


class ClassStore:
    """Classes and their guesses in a database every server process shares.

    Parameters
    ----------
    url : str or path, optional
        None: SQLite at :func:`default_db_path` (its folder made); a path or
        ``sqlite:///...``: a SQLite file; any SQLAlchemy URL, e.g.
        ``postgresql+psycopg://user@host/db``.
    ttl_hours : float
        A class and its guesses are deleted this long after it was opened.
    clock : callable
        Seconds since the epoch (``time.time``; a test injects its own).

    Every method runs in one transaction, committed before it returns. On SQLite each
    connection runs in WAL mode with a busy timeout of :data:`BUSY_TIMEOUT_S`, and a write
    takes the write lock when it begins (``BEGIN IMMEDIATE``), so many writers at once, from
    threads or processes, wait their turn instead of failing. The tables are made when
    missing.
    """

    def __init__(self, url: str | None = None, *, ttl_hours: float = 24.0,
                 clock: Callable[[], float] = time.time):
        import sqlalchemy as sa

        if isinstance(ttl_hours, bool) or not isinstance(ttl_hours, Real) or not (
                0 < ttl_hours < math.inf):
            raise ValueError(f"ttl_hours must be a positive number of hours; got "
                             f"{describe(ttl_hours)}.")
        self.ttl_hours = float(ttl_hours)
        self.clock = clock
        self.url = _sqlalchemy_url(url)
        self._sa = sa
        self._engine = sa.create_engine(self.url)
        self.dialect = self._engine.dialect.name
        if self.dialect == "sqlite":
            _sqlite_events(self._engine)
        metadata = sa.MetaData()
        self._classes = sa.Table(
            "classes", metadata,
            sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
            sa.Column("key_hash", sa.String(64), nullable=False),
            sa.Column("scenario", sa.String(MAX_SCENARIO), nullable=False),
            sa.Column("n_tasks", sa.Integer, nullable=False),
            sa.Column("round", sa.Integer, nullable=False),
            sa.Column("revealed", sa.Boolean, nullable=False),
            sa.Column("created", sa.Float, nullable=False),
            sa.Column("expires", sa.Float, nullable=False, index=True),
        )
        self._guesses = sa.Table(
            "guesses", metadata,
            sa.Column("code", sa.String(CODE_LENGTH), primary_key=True),
            sa.Column("round", sa.Integer, primary_key=True),
            sa.Column("student", sa.String(MAX_STUDENT_ID), primary_key=True),
            sa.Column("nickname", sa.String(MAX_NICKNAME), nullable=False),
            sa.Column("scenario", sa.String(MAX_SCENARIO), nullable=False),
            sa.Column("guess_json", sa.Text, nullable=False),
            sa.Column("locked_at", sa.Float, nullable=False),
        )
        self._create_tables(metadata)

    # -------------------------------------------------------------- plumbing
    @classmethod
    def from_environment(cls) -> ClassStore:
        """The store the app uses: the URL in ``$MTL_CLASS_DB`` (default: the SQLite file at
        :func:`default_db_path`), ``$MTL_CLASS_TTL_HOURS`` (default 24); one store per
        process for each (URL, ttl), made on first use."""
        url = os.environ.get(CLASS_DB_ENV) or None
        text = os.environ.get(CLASS_TTL_ENV) or "24"
        try:
            ttl = float(text)
        except ValueError:
            raise ValueError(f"${CLASS_TTL_ENV} must be a number of hours; got "
                             f"{describe(text)}.") from None
        key = (url, ttl, os.getpid())
        with _stores_lock:
            if key not in _stores:
                _stores[key] = cls(url, ttl_hours=ttl)
            return _stores[key]

    def close(self) -> None:
        """Close the store's connections."""
        self._engine.dispose()

    def __enter__(self) -> ClassStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ClassStore({self._engine.url.render_as_string(hide_password=True)!r})"

    @contextmanager
    def _transaction(self, *, write: bool):
        with self._engine.connect() as conn:
            if write:
                conn.execution_options(mtl_write=True)
            with conn.begin():
                yield conn

    def _create_tables(self, metadata) -> None:
        from sqlalchemy.schema import CreateIndex, CreateTable

        sa = self._sa
        existing = set(sa.inspect(self._engine).get_table_names())
        if {"classes", "guesses"} <= existing:
            return
        for attempt in range(3):
            try:
                with self._transaction(write=True) as conn:
                    if self.dialect == "postgresql":   # processes starting together
                        conn.execute(sa.text("SELECT pg_advisory_xact_lock(4141041)"))
                    for table in metadata.sorted_tables:
                        conn.execute(CreateTable(table, if_not_exists=True))
                        for index in table.indexes:
                            conn.execute(CreateIndex(index, if_not_exists=True))
                return
            except sa.exc.DBAPIError:
                if attempt == 2:
                    raise
                time.sleep(0.1)

    def _class_row(self, conn, code, *, share: bool = False):
        """The open class ``code`` (expired ones count as gone), or None."""
        code = _normal_code(code)
        if code is None:
            return None
        c = self._classes
        query = self._sa.select(c).where(c.c.code == code, c.c.expires > self.clock())
        if share:   # PostgreSQL: a reveal waits for the locks in flight (SQLite: one writer)
            query = query.with_for_update(read=True)
        return conn.execute(query).mappings().first()

    def _teacher_row(self, conn, code, key, *, share: bool = False):
        row = self._class_row(conn, code, share=share)
        if not _key_matches(row, key):
            raise PermissionError(_NOT_TEACHER + ".")
        return row

    # -------------------------------------------------------------- anyone
    def open_class(self, scenario: str, *, n_tasks: int) -> tuple[str, str]:
        """Open a class on ``scenario`` (its data has ``n_tasks`` tasks), round 1.

        Parameters
        ----------
        scenario : str
            The scenario's name (the app's ``data/scenarios``); at most 100 characters.
        n_tasks : int
            Its tasks: the size of every guess of the round.

        Returns
        -------
        (code, teacher_key)
            The class code for the students' link and the teacher's secret key (stored only
            as its SHA-256 hash: keep it).
        """
        sa = self._sa
        scenario = _check_text(scenario, "scenario", MAX_SCENARIO, empty=False)
        n_tasks = _check_n_tasks(n_tasks)
        self.purge_expired()
        key = secrets.token_urlsafe(KEY_BYTES)
        for attempt in range(5):
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            now = self.clock()
            try:
                with self._transaction(write=True) as conn:
                    conn.execute(self._classes.insert().values(
                        code=code, key_hash=_key_hash(key), scenario=scenario,
                        n_tasks=n_tasks, round=1, revealed=False, created=now,
                        expires=now + self.ttl_hours * 3600.0))
                return code, key
            except sa.exc.IntegrityError:   # a code in use (1 in 2**40 a class)
                if attempt == 4:
                    raise
        raise AssertionError("unreachable")   # pragma: no cover

    def class_state(self, code: str) -> ClassState | None:
        """The class's round and reveal; None for an unknown, ended or expired class."""
        with self._transaction(write=False) as conn:
            row = self._class_row(conn, code)
        if row is None:
            return None
        return ClassState(code=row["code"], round=int(row["round"]), scenario=row["scenario"],
                          n_tasks=int(row["n_tasks"]), revealed=bool(row["revealed"]),
                          created=float(row["created"]), expires=float(row["expires"]))

    def is_teacher(self, code: str, key: str) -> bool:
        """Whether ``key`` is the teacher's key of the open class ``code`` (constant time in
        the key; False for an unknown class or a key that is no text)."""
        with self._transaction(write=False) as conn:
            row = self._class_row(conn, code)
        return _key_matches(row, key)

    def lock_guess(self, code: str, student: str, guess: Guess, nickname: str = "") -> None:
        """Store ``student``'s guess for the class's current round (committed on return).

        A second lock of the same student replaces the first while the round is not
        revealed.

        Parameters
        ----------
        code : str
            The class code.
        student : str
            The student's random per-browser id (1-64 of ``[A-Za-z0-9_-]``).
        guess : Guess
            Checked with :meth:`Guess.validated` against the round's number of tasks.
        nickname : str
            At most 40 characters, no control characters; stored as given ('' anonymous).

        Raises
        ------
        ValueError
            The student id, the nickname or the guess is not valid (the message names it).
        UnknownClass
            No open class has this code.
        GuessRefused
            The round is revealed.
        """
        student = _check_student(student)
        nickname = _check_text(nickname, "nickname", MAX_NICKNAME)
        if not isinstance(guess, Guess):
            raise ValueError(f"guess must be a Guess; got {describe(guess)}.")
        sa = self._sa
        g = self._guesses
        for attempt in range(3):
            try:
                with self._transaction(write=True) as conn:
                    row = self._class_row(conn, code, share=True)
                    if row is None:
                        raise UnknownClass(f"no open class has the code {describe(code)} (it "
                                           "may have ended or expired).")
                    if row["revealed"]:
                        raise GuessRefused(f"round {row['round']} of class {row['code']} is "
                                           "revealed: guesses are locked.")
                    text = guess.validated(int(row["n_tasks"])).to_json()
                    values = dict(nickname=nickname, scenario=row["scenario"],
                                  guess_json=text, locked_at=self.clock())
                    where = (g.c.code == row["code"], g.c.round == row["round"],
                             g.c.student == student)
                    if conn.execute(g.update().where(*where).values(**values)).rowcount == 0:
                        conn.execute(g.insert().values(code=row["code"], round=row["round"],
                                                       student=student, **values))
                return
            except sa.exc.IntegrityError:   # the same student locking twice at once
                if attempt == 2:
                    raise

    def guess_of(self, code: str, student: str) -> Guess | None:
        """``student``'s own guess of the class's current round, or None."""
        student = _check_student(student)
        g = self._guesses
        with self._transaction(write=False) as conn:
            row = self._class_row(conn, code)
            if row is None:
                return None
            text = conn.execute(self._sa.select(g.c.guess_json).where(
                g.c.code == row["code"], g.c.round == row["round"],
                g.c.student == student)).scalar()
        return None if text is None else Guess.from_json(text)

    def pooled_after_reveal(self, code: str) -> tuple[np.ndarray, int] | None:
        """The class's mean guess of the current round and how many locked one, once the
        teacher revealed the round (anyone with the class code may see the pooled view
        then, never a single student's guess); None before the reveal, for a round nobody
        locked, or for an unknown, ended or expired class.

        Returns
        -------
        (pooled, n) : ((n_tasks, n_tasks) array, int)
            :func:`pooled_guess` of the round's guesses (NaN where nobody guessed the
            pair), and the number of guesses pooled.
        """
        g = self._guesses
        with self._transaction(write=False) as conn:
            row = self._class_row(conn, code)
            if row is None or not row["revealed"]:
                return None
            texts = conn.execute(self._sa.select(g.c.guess_json).where(
                g.c.code == row["code"], g.c.round == row["round"])).scalars().all()
        guesses = [Guess.from_json(text) for text in texts]
        return (pooled_guess(guesses), len(guesses)) if guesses else None

    # -------------------------------------------------------------- the teacher
    def guesses(self, code: str, key: str, round: int | None = None) -> list[GuessRecord]:
        """The class's guesses of ``round`` (None: the current round), by lock time.

        Raises
        ------
        PermissionError
            ``key`` is not the teacher's key of the open class ``code``.
        """
        g = self._guesses
        with self._transaction(write=False) as conn:
            row = self._teacher_row(conn, code, key)
            number = row["round"] if round is None else round
            if isinstance(number, bool) or not isinstance(number, Integral):
                raise ValueError(f"round must be a round number; got {describe(round)}.")
            rows = conn.execute(self._sa.select(g).where(
                g.c.code == row["code"], g.c.round == int(number)).order_by(
                    g.c.locked_at, g.c.student)).mappings().all()
        return [_record(r) for r in rows]

    def n_locked(self, code: str, key: str) -> int:
        """How many students locked a guess this round (teacher only)."""
        sa, g = self._sa, self._guesses
        with self._transaction(write=False) as conn:
            row = self._teacher_row(conn, code, key)
            return int(conn.execute(sa.select(sa.func.count()).select_from(g).where(
                g.c.code == row["code"], g.c.round == row["round"])).scalar())

    def reveal(self, code: str, key: str) -> None:
        """Reveal the current round to the class (teacher only)."""
        c = self._classes
        with self._transaction(write=True) as conn:
            row = self._teacher_row(conn, code, key)
            conn.execute(c.update().where(c.c.code == row["code"]).values(revealed=True))

    def next_round(self, code: str, key: str, scenario: str, *, n_tasks: int) -> int:
        """Move the class to a new, unrevealed round on ``scenario`` (teacher only); earlier
        rounds' guesses are kept. Returns the new round's number."""
        scenario = _check_text(scenario, "scenario", MAX_SCENARIO, empty=False)
        n_tasks = _check_n_tasks(n_tasks)
        c = self._classes
        with self._transaction(write=True) as conn:
            row = self._teacher_row(conn, code, key)
            number = int(row["round"]) + 1
            conn.execute(c.update().where(c.c.code == row["code"]).values(
                round=number, revealed=False, scenario=scenario, n_tasks=n_tasks))
        return number

    def end_class(self, code: str, key: str) -> None:
        """Delete the class and all its guesses (teacher only)."""
        with self._transaction(write=True) as conn:
            row = self._teacher_row(conn, code, key)
            conn.execute(self._guesses.delete().where(self._guesses.c.code == row["code"]))
            conn.execute(self._classes.delete().where(self._classes.c.code == row["code"]))

    def purge_expired(self) -> int:
        """Delete the classes past their expiry, with their guesses; how many classes."""
        sa, c, g = self._sa, self._classes, self._guesses
        with self._transaction(write=True) as conn:
            expired = sa.select(c.c.code).where(c.c.expires <= self.clock())
            conn.execute(g.delete().where(g.c.code.in_(expired)))
            return int(conn.execute(c.delete().where(c.c.expires <= self.clock())).rowcount)

    def to_frame(self, code: str, key: str) -> pd.DataFrame:
        """Every round's guesses of the class as a tidy frame (teacher only).

        Returns
        -------
        DataFrame
            Columns ``round``, ``scenario``, ``student``, ``nickname``, ``locked_at``,
            ``what``, ``i``, ``j``, ``guess``: ``what="relation"``: one row per task pair
            ``i < j`` (``guess`` +1, -1, 0, NaN for don't know); ``"outlier"``: one row per
            task ``i`` (``guess`` 1 or 0, ``j`` missing) when the student guessed outliers;
            ``"feature"``: one row per feature ``i`` guessed shared (``guess`` 1).
        """
        g = self._guesses
        with self._transaction(write=False) as conn:
            row = self._teacher_row(conn, code, key)
            rows = conn.execute(self._sa.select(g).where(g.c.code == row["code"]).order_by(
                g.c.round, g.c.locked_at, g.c.student)).mappings().all()
        records = []
        for r in rows:
            guess = Guess.from_json(r["guess_json"])
            base = (int(r["round"]), r["scenario"], r["student"], r["nickname"],
                    float(r["locked_at"]))
            a, b = np.triu_indices(guess.n_tasks, 1)
            records += [(*base, "relation", int(i), int(j), float(guess.relation[i, j]))
                        for i, j in zip(a, b, strict=True)]
            if guess.outliers is not None:
                records += [(*base, "outlier", i, None, float(v))
                            for i, v in enumerate(guess.outliers)]
            if guess.features is not None:
                records += [(*base, "feature", f, None, 1.0) for f in guess.features]
        frame = pd.DataFrame.from_records(records, columns=list(FRAME_COLUMNS))
        return frame.astype({"round": "int64", "i": "Int64", "j": "Int64",
                             "guess": "float64", "locked_at": "float64"})

    def to_csv(self, code: str, key: str) -> str:
        """:meth:`to_frame` as CSV text; a nickname a spreadsheet would run as a formula
        (``=``, ``+``, ``-``, ``@`` first) gets a ``'`` before it."""
        frame = self.to_frame(code, key)
        frame["nickname"] = frame["nickname"].map(
            lambda s: "'" + s if s[:1] in ("=", "+", "-", "@", "\t", "\r") else s)
        # the nullable task indices as text (pandas 2.0 with NumPy 1.24, the lowest versions
        # declared, warned casting <NA>); the numbers as frame_to_csv writes them
        from explorer.data.dataset import frame_to_csv

        for column in ("i", "j"):
            frame[column] = [("" if pd.isna(v) else str(int(v))) for v in frame[column]]
        return frame_to_csv(frame)


#: The columns of :meth:`ClassStore.to_frame`.
FRAME_COLUMNS = ("round", "scenario", "student", "nickname", "locked_at", "what", "i", "j",
                 "guess")


def _key_matches(row, key) -> bool:
    """Constant time in the key: an unknown class is compared with a hash no key has."""
    if not isinstance(key, str) or len(key) > 200:
        return False
    stored = row["key_hash"] if row is not None else _NO_KEY_HASH
    return hmac.compare_digest(_key_hash(key), stored) and row is not None


def _record(row) -> GuessRecord:
    return GuessRecord(student=row["student"], nickname=row["nickname"],
                       round=int(row["round"]), scenario=row["scenario"],
                       guess=Guess.from_json(row["guess_json"]),
                       locked_at=float(row["locked_at"]))


def _sqlite_events(engine) -> None:
    """WAL and the busy timeout on every connection; ``BEGIN IMMEDIATE`` for writes (a
    deferred transaction that reads, then writes, can fail at once with "database is locked"
    when another writer got in between, whatever the timeout)."""
    from sqlalchemy import event

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection, _record):
        dbapi_connection.isolation_level = None   # the BEGIN below is ours
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn):
        write = conn.get_execution_options().get("mtl_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


_KEY_IN_URL = re.compile(r"([?&;]key=)[^&;#\s]*")


def redact_keys(text: str) -> str:
    """``text`` with the value of every ``key=`` query item of a URL hidden.

    >>> redact_keys("GET /explorer?class=ABCDEFGH&key=s3cr3t-_x (127.0.0.1)")
    'GET /explorer?class=ABCDEFGH&key=<hidden> (127.0.0.1)'
    """
    return _KEY_IN_URL.sub(r"\1<hidden>", text)


class KeyRedactingFilter(logging.Filter):
    """A logging filter that hides teacher keys in the URLs a record carries (Tornado's
    access log writes each request's address; ``python -m explorer serve`` puts this filter
    on the ``tornado.access`` logger)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_keys(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_keys(a) if isinstance(a, str) else a
                                for a in record.args)
        return True


def read_class(code: str, key: str, url: str | None = None) -> pd.DataFrame:
    """A class's guesses, every round, as :meth:`ClassStore.to_frame` gives them.

    Parameters
    ----------
    code, key : str
        The class code and the teacher's key.
    url : str, optional
        The store (as :class:`ClassStore`; None: the default SQLite file).
    """
    with ClassStore(url) as store:
        return store.to_frame(code, key)
