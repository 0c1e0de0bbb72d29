"""explorer.classroom: the class store (on SQLite and on PostgreSQL) and the scoring of guesses.

The store's tests run on a SQLite file and on the PostgreSQL server at
``$MTL_TEST_POSTGRES_URL`` (each test in a schema of its own, dropped afterwards). CI starts
one (.ci/postgres.sh, sourced by .ci/run) and sets ``CI_REQUIRES_POSTGRES=1``: there a
missing URL fails the PostgreSQL cases; elsewhere they are skipped with the reason.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
import re
import threading
import uuid
from urllib.parse import quote

import numpy as np
import pandas as pd
import pytest

from explorer.classroom import (
    CODE_ALPHABET,
    MAX_FEATURE_GUESSES,
    ClassState,
    ClassStore,
    Guess,
    GuessRefused,
    UnknownClass,
    default_db_path,
    most_wrong_pairs,
    pooled_guess,
    read_class,
    score_guess,
    where_wrong,
)

POSTGRES_URL = os.environ.get("MTL_TEST_POSTGRES_URL", "")
HOUR = 3600.0


class Clock:
    """A clock the test moves."""

    def __init__(self, now: float = 1_000_000.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """A store's URL: a SQLite file, or a fresh schema on the test PostgreSQL server."""
    if request.param == "sqlite":
        yield str(tmp_path / "classes.sqlite")
        return
    if not POSTGRES_URL:
        if os.environ.get("CI_REQUIRES_POSTGRES") == "1":
            pytest.fail("CI_REQUIRES_POSTGRES=1 but MTL_TEST_POSTGRES_URL is not set: .ci/run "
                        "starts a server with .ci/postgres.sh and exports it", pytrace=False)
        pytest.skip("no PostgreSQL: set MTL_TEST_POSTGRES_URL=postgresql+psycopg://... "
                    "(bash .ci/postgres.sh CMD runs CMD with a throwaway server)")
    import sqlalchemy as sa

    schema = "t_" + uuid.uuid4().hex[:12]
    admin = sa.create_engine(POSTGRES_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
    separator = "&" if "?" in POSTGRES_URL else "?"
    yield f"{POSTGRES_URL}{separator}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture
def stores(url):
    """Make stores on ``url``; all closed at the end."""
    made = []

    def make(**kwargs) -> ClassStore:
        made.append(ClassStore(url, **kwargs))
        return made[-1]

    yield make
    for store in made:
        store.close()


def _rows(store: ClassStore, table: str) -> list[dict]:
    """A table's raw rows, read past the store's API."""
    import sqlalchemy as sa

    with store._engine.connect() as conn:
        return [dict(r) for r in conn.execute(sa.text(f"SELECT * FROM {table}")).mappings()]


def _grid(*upper: float, m: int | None = None) -> np.ndarray:
    """A symmetric guess from its upper triangle, row by row, diagonal 1."""
    m = m or int(round((1 + math.sqrt(1 + 8 * len(upper))) / 2))
    grid = np.eye(m)
    grid[np.triu_indices(m, 1)] = upper
    return np.triu(grid, 1) + np.triu(grid, 1).T + np.eye(m)


RIGHT = Guess(_grid(1, -1, 0))   # the truth of TRUTH3 exactly
TRUTH3 = _grid(1, -1, 0)


# ---------------------------------------------------------------------- safe
def test_codes_and_keys_are_random_long_and_only_hashed(stores):
    store = stores()
    opened = [store.open_class("negated_task", n_tasks=3) for _ in range(20)]
    codes, keys = zip(*opened, strict=True)
    assert len(set(codes)) == 20 and len(set(keys)) == 20
    for code, key in opened:
        assert len(code) * math.log2(len(CODE_ALPHABET)) >= 40
        assert set(code) <= set(CODE_ALPHABET) and len(set(CODE_ALPHABET)) == 32
        assert not set("01IO") & set(CODE_ALPHABET)   # unambiguous when read aloud
        assert len(key) * 6 >= 128 and re.fullmatch(r"[A-Za-z0-9_-]+", key)
    rows = {r["code"]: r for r in _rows(store, "classes")}
    assert set(rows) == set(codes)
    for code, key in opened:
        assert rows[code]["key_hash"] == hashlib.sha256(key.encode()).hexdigest()
        assert key not in repr(rows[code])   # never in clear, in any column
    assert all(store.is_teacher(code, key) for code, key in opened)
    assert store.is_teacher(codes[0].lower(), keys[0])   # a code typed in small letters


def test_a_wrong_or_missing_key_gets_nothing_of_the_class(stores):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    other_code, other_key = store.open_class("negated_task", n_tasks=3)
    store.lock_guess(code, "student-1", RIGHT, "Ann")
    for wrong in ("", None, key[:-1], key + "x", other_key, 12345, "x" * 10_000):
        assert store.is_teacher(code, wrong) is False
        for call in (lambda k: store.guesses(code, k), lambda k: store.n_locked(code, k),
                     lambda k: store.to_frame(code, k), lambda k: store.to_csv(code, k),
                     lambda k: store.reveal(code, k), lambda k: store.end_class(code, k),
                     lambda k: store.next_round(code, k, "outlier_tasks", n_tasks=5)):
            with pytest.raises(PermissionError, match="the teacher's key") as info:
                call(wrong)
            message = str(info.value)
            assert "negated_task" not in message and "Ann" not in message and "1" not in message
    # an unknown code: the same answer, nothing to tell it from a wrong key
    for unknown in ("ZZZZZZZZ", "", None, "not a code", other_code[::-1]):
        assert store.is_teacher(unknown, key) is False
        with pytest.raises(PermissionError, match="the teacher's key"):
            store.guesses(unknown, key)
    # the class unharmed
    assert store.class_state(code) == ClassState(
        code=code, round=1, scenario="negated_task", n_tasks=3, revealed=False,
        created=store.class_state(code).created, expires=store.class_state(code).expires)
    assert store.n_locked(code, key) == 1
    assert [r.nickname for r in store.guesses(code, key)] == ["Ann"]


TAMPERED = [
    (Guess(np.eye(4)), "shape (3, 3), one row and one column per task; got shape (4, 4)"),
    (Guess(np.ones(3)), "shape (3, 3)"),
    (Guess(np.eye(1000)), "got shape (1000, 1000)"),   # 10^6 cells
    (Guess(_grid(1, 2, 0)), "+1 (related), -1 (negated), 0 (unrelated) or NaN (don't know); "
                            "got 2.0 at (0, 2)"),
    (Guess(_grid(1, 0.5, 0)), "got 0.5 at (0, 2)"),
    (Guess(_grid(1, np.inf, 0)), "got inf at (0, 2)"),
    (Guess(np.where(np.eye(3) == 1, np.nan, TRUTH3)), "1 on the diagonal (a task is related "
                                                      "to itself); got nan at (0, 0)"),
    (Guess(TRUTH3 - 2 * np.eye(3)), "1 on the diagonal"),
    (Guess(np.triu(TRUTH3)), "symmetric; got 1.0 at (0, 1) but 0.0 at (1, 0)"),
    (Guess(TRUTH3, outliers=[True, False]), "guess.outliers must have one entry per task, "
                                            "shape (3,); got shape (2,)"),
    (Guess(TRUTH3, features=(1, 1)), "guess.features must name each feature once; got [1]"),
    (Guess(TRUTH3, features=(-1,)), "guess.features must be feature indices in 0 or more; "
                                    "got -1"),
]


@pytest.mark.parametrize(("guess", "message"), TAMPERED)
def test_a_tampered_guess_is_refused_naming_what_was_wrong(stores, guess, message):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    store.lock_guess(code, "s1", RIGHT)
    with pytest.raises(ValueError, match=re.escape(message)):
        store.lock_guess(code, "s1", guess)
    assert store.guess_of(code, "s1") == RIGHT   # the class unharmed
    assert store.n_locked(code, key) == 1


@pytest.mark.parametrize(("make", "message"), [
    (lambda: Guess("related"), "guess.relation must be a tasks x tasks matrix of numbers"),
    (lambda: Guess([[1, "x"], ["x", 1]]), "guess.relation must be a tasks x tasks matrix"),
    (lambda: Guess(TRUTH3, features=tuple(range(MAX_FEATURE_GUESSES + 1))),
     f"guess.features must name at most {MAX_FEATURE_GUESSES} features; got 51"),
    (lambda: Guess(TRUTH3, features=(1.5,)), "guess.features must be integer feature indices"),
    (lambda: Guess(TRUTH3, features="12"), "guess.features must be a list of feature indices"),
    (lambda: Guess(TRUTH3, outliers=[0, 2, 1]), "guess.outliers must be one true/false per task"),
    (lambda: Guess.from_json("{"), "guess JSON is not valid JSON"),
    (lambda: Guess.from_json('{"relation": "x"}'), "guess.relation must be a list of rows"),
    (lambda: Guess.from_json('{"relation": [[1, true], [true, 1]]}'),
     "guess.relation must hold numbers or null"),
    (lambda: Guess.from_json('{"relation": [[1], [1, 1]]}'), "rows must be of one length"),
    (lambda: Guess.from_json('{"relation": [[1]], "who": 1}'), 'an object with "relation"'),
    (lambda: Guess.from_json(" " * 1_000_001), "at most 1,000,000 characters"),
])
def test_a_guess_that_cannot_be_one_is_refused_when_made(make, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        make()


def test_features_are_checked_against_the_data_and_sorted():
    guess = Guess(TRUTH3, features=[4, 0])
    assert guess.validated(3).features == (0, 4)
    assert guess.validated(3, n_features=5).features == (0, 4)
    with pytest.raises(ValueError, match=re.escape("feature indices in 0..3; got 4")):
        guess.validated(3, n_features=4)
    assert Guess(TRUTH3, features=tuple(range(MAX_FEATURE_GUESSES))).validated(3).features


def test_a_guess_round_trips_through_json():
    guess = Guess(_grid(1, np.nan, -1), outliers=[False, True, False], features=(3, 7))
    assert Guess.from_json(guess.to_json()) == guess
    assert Guess.from_json(RIGHT.to_json()) == RIGHT != guess
    assert guess.relation.flags.writeable is False
    with pytest.raises(ValueError, match=re.escape("a tasks x tasks matrix; got shape (3,)")):
        Guess(np.ones(3)).to_json()


@pytest.mark.parametrize(("student", "nickname", "message"), [
    ("", "", "student must be an id of 1 to 64 letters, digits, '_' or '-'"),
    ("a" * 65, "", "student must be an id of 1 to 64"),
    ("a b", "", "student must be an id"),
    ("<script>", "", "student must be an id"),
    (None, "", "student must be an id"),
    ("s1", "x" * 41, "nickname must be at most 40 characters; got 41"),
    ("s1", "a\x00b", "nickname must have no control characters"),
    ("s1", 7, "nickname must be text; got 7"),
])
def test_a_bad_student_id_or_nickname_is_refused(stores, student, nickname, message):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    with pytest.raises(ValueError, match=re.escape(message)):
        store.lock_guess(code, student, RIGHT, nickname)
    assert store.n_locked(code, key) == 0


def test_a_nickname_with_markup_is_stored_as_given_and_csv_defuses_formulas(stores):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    store.lock_guess(code, "s1", RIGHT, "<b>Ann</b> & 'Bo'")
    store.lock_guess(code, "s2", RIGHT, "=HYPERLINK(\"x\")")
    assert {r.nickname for r in store.guesses(code, key)} == {"<b>Ann</b> & 'Bo'",
                                                             "=HYPERLINK(\"x\")"}
    frame = pd.read_csv(__import__("io").StringIO(store.to_csv(code, key)))
    assert set(frame["nickname"]) == {"<b>Ann</b> & 'Bo'", "'=HYPERLINK(\"x\")"}


# ---------------------------------------------------------------------- lock, reveal
def test_lock_replace_and_refuse_after_the_reveal(stores):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    first, second = Guess(_grid(1, np.nan, 0)), Guess(_grid(-1, -1, 1), outliers=[1, 0, 0])
    store.lock_guess(code, "s1", first, "Ann")
    assert store.guess_of(code, "s1") == first
    store.lock_guess(code, "s1", second, "Annie")   # replaces it: one guess a round
    assert store.guess_of(code, "s1") == second and store.n_locked(code, key) == 1
    assert [(r.student, r.nickname, r.round, r.scenario) for r in store.guesses(code, key)] == [
        ("s1", "Annie", 1, "negated_task")]
    store.lock_guess(code, "s2", first)
    # a student reads their own guess only; none for one who has not locked
    assert store.guess_of(code, "s1") == second and store.guess_of(code, "s2") == first
    assert store.guess_of(code, "s3") is None
    assert store.guess_of("ZZZZZZZZ", "s1") is None
    assert store.class_state(code).revealed is False
    store.reveal(code, key)
    assert store.class_state(code).revealed is True
    with pytest.raises(GuessRefused, match="round 1 of class .* is revealed"):
        store.lock_guess(code, "s1", first)
    with pytest.raises(GuessRefused):
        store.lock_guess(code, "s3", first)
    assert store.guess_of(code, "s1") == second and store.n_locked(code, key) == 2
    with pytest.raises(UnknownClass, match="no open class has the code 'ZZZZZZZZ'"):
        store.lock_guess("ZZZZZZZZ", "s1", first)
    with pytest.raises(UnknownClass):
        store.lock_guess(None, "s1", first)


def test_a_reveal_is_seen_by_every_store_on_the_database(stores):
    teacher, student = stores(), stores()   # two server processes' stores
    code, key = teacher.open_class("negated_task", n_tasks=3)
    assert student.class_state(code).revealed is False
    teacher.reveal(code, key)
    assert student.class_state(code).revealed is True


def test_students_see_the_pooled_guess_only_after_the_reveal(stores):
    teacher, student = stores(), stores()   # two server processes' stores
    code, key = teacher.open_class("negated_task", n_tasks=3)
    assert student.pooled_after_reveal(code) is None          # nobody locked, not revealed
    student.lock_guess(code, "s1", Guess(_grid(1, -1, np.nan)))
    student.lock_guess(code, "s2", Guess(_grid(-1, -1, 0)))
    assert student.pooled_after_reveal(code) is None          # before the reveal: nothing
    teacher.reveal(code, key)
    pooled, n = student.pooled_after_reveal(code)
    assert n == 2
    np.testing.assert_array_equal(pooled, _grid(0, -1, 0))    # (s1's open pair: s2's 0)
    assert student.pooled_after_reveal("ZZZZZZZZ") is None
    teacher.next_round(code, key, "negated_task", n_tasks=3)
    assert student.pooled_after_reveal(code) is None          # the new round: not revealed


def test_next_round_keeps_the_earlier_rounds(stores):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    store.lock_guess(code, "s1", RIGHT, "Ann")
    store.reveal(code, key)
    assert store.next_round(code, key, "outlier_tasks", n_tasks=5) == 2
    state = store.class_state(code)
    assert (state.round, state.scenario, state.n_tasks, state.revealed) == (
        2, "outlier_tasks", 5, False)
    assert store.guess_of(code, "s1") is None and store.n_locked(code, key) == 0
    with pytest.raises(ValueError, match=re.escape("shape (5, 5)")):
        store.lock_guess(code, "s1", RIGHT)   # the new round's size
    five = Guess(np.eye(5), outliers=[0, 0, 0, 1, 1], features=(0, 2))
    store.lock_guess(code, "s1", five, "Ann")
    assert store.guess_of(code, "s1") == five
    assert [r.guess for r in store.guesses(code, key, round=1)] == [RIGHT]
    assert [r.scenario for r in store.guesses(code, key)] == ["outlier_tasks"]
    with pytest.raises(ValueError, match="n_tasks must be a whole number in 2..200"):
        store.next_round(code, key, "outlier_tasks", n_tasks=1)
    with pytest.raises(ValueError, match="scenario must not be empty"):
        store.next_round(code, key, " ", n_tasks=3)


def test_end_class_deletes_the_class_and_its_guesses(stores):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    kept, kept_key = store.open_class("negated_task", n_tasks=3)
    for c in (code, kept):
        store.lock_guess(c, "s1", RIGHT)
    store.next_round(code, key, "negated_task", n_tasks=3)
    store.lock_guess(code, "s1", RIGHT)
    store.end_class(code, key)
    assert store.class_state(code) is None and store.is_teacher(code, key) is False
    assert [r["code"] for r in _rows(store, "classes")] == [kept]
    assert [r["code"] for r in _rows(store, "guesses")] == [kept]
    with pytest.raises(UnknownClass):
        store.lock_guess(code, "s1", RIGHT)
    with pytest.raises(PermissionError):
        store.end_class(code, key)
    assert store.n_locked(kept, kept_key) == 1


def test_classes_expire_with_their_guesses(stores):
    clock = Clock()
    store = stores(ttl_hours=2, clock=clock)
    code, key = store.open_class("negated_task", n_tasks=3)
    store.lock_guess(code, "s1", RIGHT)
    state = store.class_state(code)
    assert (state.created, state.expires) == (clock.now, clock.now + 2 * HOUR)
    clock.now += 2 * HOUR - 1
    assert store.purge_expired() == 0 and store.class_state(code) is not None
    later, later_key = store.open_class("negated_task", n_tasks=3)
    clock.now += 1   # past the expiry: gone for everyone, before it is even purged
    assert store.class_state(code) is None and store.is_teacher(code, key) is False
    with pytest.raises(UnknownClass):
        store.lock_guess(code, "s2", RIGHT)
    with pytest.raises(PermissionError):
        store.guesses(code, key)
    assert len(_rows(store, "guesses")) == 1
    store.open_class("negated_task", n_tasks=3)   # opening a class purges the expired
    assert code not in {r["code"] for r in _rows(store, "classes")}
    assert _rows(store, "guesses") == []
    assert store.class_state(later) is not None
    clock.now += 2 * HOUR
    assert store.purge_expired() == 2 and _rows(store, "classes") == []
    with pytest.raises(ValueError, match="ttl_hours must be a positive number of hours"):
        ClassStore(store.url, ttl_hours=0)


def test_a_restart_loses_nothing(url):
    before = ClassStore(url)
    code, key = before.open_class("negated_task", n_tasks=3)
    before.lock_guess(code, "s1", RIGHT, "Ann")
    before.next_round(code, key, "two_related_tasks", n_tasks=3)
    before.lock_guess(code, "s1", Guess(_grid(1, 1, 1)), "Ann")
    before.lock_guess(code, "s2", Guess(_grid(1, 1, np.nan)))
    before.reveal(code, key)
    before.close()
    after = ClassStore(url)   # a new process on the same database
    try:
        state = after.class_state(code)
        assert (state.round, state.scenario, state.revealed) == (2, "two_related_tasks", True)
        assert after.is_teacher(code, key) and after.n_locked(code, key) == 2
        assert after.guess_of(code, "s1") == Guess(_grid(1, 1, 1))
        assert [r.guess for r in after.guesses(code, key, round=1)] == [RIGHT]
    finally:
        after.close()


KILLED_AFTER_LOCKING = """
import os, signal, sys
import numpy as np
from explorer.classroom import ClassStore, Guess
store = ClassStore(sys.argv[1])
for i in range(5):
    store.lock_guess(sys.argv[2], f"s{i}", Guess(np.eye(3)), nickname=f"n{i}")
print("locked", flush=True)
os.kill(os.getpid(), signal.SIGKILL)   # no close, no checkpoint: a server killed
"""


def test_a_process_killed_after_locking_loses_no_guess(stores, url):
    import signal
    import subprocess
    import sys

    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    killed = subprocess.run([sys.executable, "-c", KILLED_AFTER_LOCKING, url, code],
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -signal.SIGKILL and killed.stdout == "locked\n", killed.stderr
    after = stores()   # the restarted server's store
    assert after.n_locked(code, key) == 5
    assert {r.nickname for r in after.guesses(code, key)} == {f"n{i}" for i in range(5)}
    assert after.guess_of(code, "s4") == Guess(np.eye(3))


# ---------------------------------------------------------------------- thirty at once
def _lock_together(url: str, code: str, students: list[str], barrier) -> list[str]:
    """Lock a guess for each student, each from a thread of its own, all at once; the
    errors."""
    store = ClassStore(url)
    errors: list[str] = []
    start = threading.Barrier(len(students))

    def lock(student):
        try:
            start.wait(timeout=30)
            store.lock_guess(code, student, RIGHT, nickname=student)
        except Exception as exc:   # reported, not raised: the test counts them
            errors.append(f"{student}: {type(exc).__name__}: {exc}")

    if barrier is not None:
        barrier.wait(timeout=60)
    threads = [threading.Thread(target=lock, args=(s,)) for s in students]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    store.close()
    return errors


def _process_worker(url, code, students, barrier, queue):
    queue.put(_lock_together(url, code, students, barrier))


def test_thirty_threads_lock_at_once(stores, url):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    students = [f"student-{i}" for i in range(30)]
    assert _lock_together(url, code, students, None) == []
    assert store.n_locked(code, key) == 30
    assert {r.student for r in store.guesses(code, key)} == set(students)


def test_thirty_writers_in_three_processes_lock_at_once(stores, url):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    context = multiprocessing.get_context("spawn")   # no fork of this process's threads
    barrier, queue = context.Barrier(3), context.Queue()
    groups = [[f"p{p}-student-{i}" for i in range(10)] for p in range(3)]
    processes = [context.Process(target=_process_worker, args=(url, code, group, barrier, queue))
                 for group in groups]
    for p in processes:
        p.start()
    errors = [queue.get(timeout=120) for _ in processes]
    for p in processes:
        p.join(timeout=60)
    assert [p.exitcode for p in processes] == [0, 0, 0]
    assert errors == [[], [], []]
    assert store.n_locked(code, key) == 30
    assert {r.student for r in store.guesses(code, key)} == {s for g in groups for s in g}


def test_sqlite_runs_in_wal_mode_with_a_busy_timeout(tmp_path):
    with ClassStore(tmp_path / "c.sqlite") as store:
        with store._engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 5000


# ---------------------------------------------------------------------- export
def test_to_frame_to_csv_and_read_class(stores, url):
    store = stores()
    code, key = store.open_class("negated_task", n_tasks=3)
    store.lock_guess(code, "s1", Guess(_grid(1, np.nan, -1)), "Ann")
    store.lock_guess(code, "s2", Guess(_grid(1, -1, 0), outliers=[0, 0, 1], features=(4, 1)))
    store.reveal(code, key)
    store.next_round(code, key, "two_related_tasks", n_tasks=4)
    store.lock_guess(code, "s1", Guess(np.eye(4)), "Ann")
    frame = store.to_frame(code, key)
    assert list(frame.columns) == ["round", "scenario", "student", "nickname", "locked_at",
                                   "what", "i", "j", "guess"]
    # round 1: 2 students x 3 pairs + 3 outliers + 2 features; round 2: 6 pairs
    assert len(frame) == 2 * 3 + 3 + 2 + 6
    counts = frame.groupby(["round", "student", "what"]).size().to_dict()
    assert counts == {(1, "s1", "relation"): 3, (1, "s2", "feature"): 2,
                      (1, "s2", "outlier"): 3, (1, "s2", "relation"): 3,
                      (2, "s1", "relation"): 6}
    ann = frame[(frame["round"] == 1) & (frame["student"] == "s1")]
    assert ann[["i", "j"]].astype(int).values.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert np.array_equal(ann["guess"], [1, np.nan, -1], equal_nan=True)
    assert set(ann["nickname"]) == {"Ann"} and set(ann["scenario"]) == {"negated_task"}
    features = frame[frame["what"] == "feature"]
    assert features["i"].tolist() == [1, 4] and features["j"].isna().all()
    assert frame[frame["what"] == "outlier"]["guess"].tolist() == [0, 0, 1]
    assert set(frame[frame["round"] == 2]["scenario"]) == {"two_related_tasks"}
    text = store.to_csv(code, key)
    assert text.splitlines()[0] == "round,scenario,student,nickname,locked_at,what,i,j,guess"
    assert len(text.splitlines()) == 1 + len(frame)
    pd.testing.assert_frame_equal(read_class(code, key, url), frame)
    with pytest.raises(PermissionError):
        read_class(code, "wrong", url)
    empty_code, empty_key = store.open_class("negated_task", n_tasks=3)
    assert store.to_frame(empty_code, empty_key).empty


def test_from_environment_and_the_default_path(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_db_path() == tmp_path / "data" / "mtl-explorer" / "classes.sqlite"
    monkeypatch.setenv("XDG_DATA_HOME", "relative/ignored")   # the spec: absolute only
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_db_path() == (tmp_path / "home" / ".local" / "share" / "mtl-explorer"
                                 / "classes.sqlite")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("MTL_CLASS_DB", raising=False)
    monkeypatch.delenv("MTL_CLASS_TTL_HOURS", raising=False)
    store = ClassStore.from_environment()   # the default file, its folder made
    assert store.url == f"sqlite:///{default_db_path()}" and default_db_path().exists()
    assert store.ttl_hours == 24.0 and ClassStore.from_environment() is store
    monkeypatch.setenv("MTL_CLASS_DB", f"sqlite:///{tmp_path / 'other' / 'c.db'}")
    monkeypatch.setenv("MTL_CLASS_TTL_HOURS", "1.5")
    other = ClassStore.from_environment()
    assert other is not store and other.ttl_hours == 1.5
    assert (tmp_path / "other" / "c.db").exists()
    monkeypatch.setenv("MTL_CLASS_TTL_HOURS", "soon")
    with pytest.raises(ValueError, match="MTL_CLASS_TTL_HOURS must be a number of hours"):
        ClassStore.from_environment()
    for s in (store, other):
        s.close()


# ---------------------------------------------------------------------- scoring
def test_score_guess_against_hand_computed_numbers():
    truth = {"task_relation": _grid(1, -1, 0),
             "outlier_tasks": np.array([False, True, True]),
             "shared_features": np.array([True, True, False, False, False, False])}
    guess = Guess(_grid(1, 0, -1), outliers=[True, True, False], features=(0, 2, 5))
    score = score_guess(guess, truth)
    relation = score["relation"]
    # ordered pairs (0,1) (0,2) (1,0) (1,2) (2,0) (2,1): truth 1 -1 1 0 -1 0, guess 1 0 1 -1 0 -1
    # signs over the truth's 4 signed pairs: 2 right; ranks centred: t (2 -2 2 0 -2 0),
    # g (2 0 2 -2 0 -2): 8 / 16; unit vectors' distance: |(0 .5 0 -.5 .5 -.5)| = 1
    assert relation["n_pairs"] == 6 and relation["reason"] == ""
    assert relation["sign_agreement"] == 0.5
    assert relation["rank_correlation"] == pytest.approx(0.5)
    assert relation["relative_error"] == pytest.approx(1.0)
    assert score["outliers"] == {"precision": 0.5, "recall": 0.5, "n_guessed": 2, "n_true": 2}
    assert score["features"] == pytest.approx({"precision": 1 / 3, "recall": 0.5,
                                               "n_guessed": 3, "n_true": 2})


def test_score_guess_leaves_dont_know_out():
    truth = {"task_relation": _grid(1, -1, -1)}
    score = score_guess(Guess(_grid(1, 1, np.nan)), truth)["relation"]
    # pairs (0,1) right and (0,2) wrong, (1,2) open: 4 ordered pairs, half the signs
    assert (score["n_pairs"], score["sign_agreement"]) == (4, 0.5)
    # unit vectors (1 1 1 1)/2 and (1 -1 1 -1)/2: distance sqrt(2)
    assert score["relative_error"] == pytest.approx(math.sqrt(2))
    nothing = score_guess(Guess(_grid(np.nan, np.nan, np.nan)), truth)["relation"]
    assert nothing["n_pairs"] == 0 and nothing["reason"] == "no pair was guessed"
    assert math.isnan(nothing["sign_agreement"])
    # no truth of a kind, no score of it
    assert set(score_guess(Guess(TRUTH3, outliers=[1, 0, 0]), {})) == {"relation"}
    assert score_guess(Guess(TRUTH3), {})["relation"]["reason"] == "the truth is unknown"
    with pytest.raises(ValueError, match=re.escape("truth['task_relation'] must have the "
                                                   "guess's shape (3, 3)")):
        score_guess(Guess(TRUTH3), {"task_relation": np.eye(4)})
    none = score_guess(Guess(TRUTH3, features=()), {"shared_features": np.ones(4, bool)})
    assert math.isnan(none["features"]["precision"]) and none["features"]["recall"] == 0.0


def test_pooled_guess_ignores_dont_know():
    pooled = pooled_guess([Guess(_grid(1, -1, np.nan)), Guess(_grid(1, 1, np.nan)),
                           Guess(_grid(np.nan, 1, np.nan)), Guess(_grid(-1, 0, np.nan))])
    expected = _grid(1 / 3, 1 / 4, np.nan)
    assert np.allclose(pooled, expected, equal_nan=True)
    assert np.isnan(pooled[1, 2]) and np.isnan(pooled[2, 1])
    assert np.array_equal(np.diag(pooled), [1, 1, 1])
    with pytest.raises(ValueError, match="at least one Guess"):
        pooled_guess([])
    with pytest.raises(ValueError, match="one \\(m, m\\) shape"):
        pooled_guess([Guess(np.eye(2)), Guess(np.eye(3))])


def test_most_wrong_pairs():
    truth = _grid(1, -1, 0, 1, 0, 1)   # 4 tasks
    guesses = [Guess(_grid(1, 1, 0, 1, 1, 1)),            # (0,2) and (1,3) wrong
               Guess(_grid(-1, 1, 0, 1, np.nan, 1)),      # (0,1) and (0,2) wrong
               Guess(_grid(1, 1, np.nan, 1, 0, -1)),      # (0,2) and (2,3) wrong
               Guess(_grid(1, -1, 0, 1, 0, 1))]           # all right
    assert most_wrong_pairs(guesses, truth) == [(0, 2, 0.75), (0, 1, 0.25), (1, 3, 0.25)]
    assert most_wrong_pairs(guesses, truth, k=5) == [
        (0, 2, 0.75), (0, 1, 0.25), (1, 3, 0.25), (2, 3, 0.25)]
    assert most_wrong_pairs(guesses[3:], truth) == []
    with pytest.raises(ValueError, match=re.escape("truth_relation must have shape (4, 4)")):
        most_wrong_pairs(guesses, TRUTH3)


def test_where_wrong_says_it_in_a_sentence():
    truth = _grid(1, -1, 0)
    names = ["T1", "T2", "T3"]
    estimate = np.array([[1, 0.8, 0.3], [0.7, 1, 0.1], [0.2, 0.1, 1]])
    assert where_wrong(Guess(_grid(1, 0, -1)), truth, estimate, names) == (
        "You took T1-T3 as unrelated (they are negated) and T2-T3 as negated (they are "
        "unrelated); 1 of 3 pairs right. The model got 1 of 2 pairs' signs right; it missed "
        "T1-T3.")
    truth4 = _grid(1, 1, -1, 1, -1, -1)
    assert where_wrong(Guess(_grid(1, 1, -1, 1, 1, -1)), truth4, truth4 * 0.3) == (
        "You took T1-T3 as related; they are negated. The model got all 6 pairs' signs "
        "right.")
    assert where_wrong(Guess(_grid(1, np.nan, 0)), truth) == (
        "You got all 2 pairs you guessed right. (1 pair left open.)")
    assert where_wrong(Guess(_grid(np.nan, np.nan, np.nan)), truth) == (
        "You left every pair open.")
    assert where_wrong(RIGHT, truth, -np.ones((3, 3)) + 2 * np.eye(3)) == (
        "You got all 3 pairs right. The model got 1 of 2 pairs' signs right; it missed T0-T1.")
    with pytest.raises(ValueError, match=re.escape("estimate must have shape (3, 3)")):
        where_wrong(RIGHT, truth, np.eye(4))
