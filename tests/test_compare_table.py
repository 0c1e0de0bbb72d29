"""The Compare page's table read on a projector: the average first, narrow cells, a strong
mark only on a column's clear winner, a caption saying what the mark means, names escaped;
the status's verdict agrees with it."""

from __future__ import annotations

import re

import pandas as pd
from test_compare import constructed_result

from explorer.app.comparison import TABLE_CSS
from explorer.app.pages.compare import best_on_average
from explorer.compare import ComparisonResult
from explorer.viz.comparison import CLEAR_MARK, clearly_best, page_table_html, report_html

BEST = [0.10, 0.12, 0.11, 0.13, 0.09, 0.12]
TIE = [0.11, 0.11, 0.13, 0.12, 0.10, 0.12]       # a slightly worse mean, not significant
LOSER = [0.16, 0.19, 0.15, 0.20, 0.14, 0.18]     # worse in every trial


def _cells(table: str) -> list[list[str]]:
    """Rows of the table body: each cell's HTML, the method's header first."""
    body = table.split("<tbody>")[1]
    return [re.findall(r"<t[hd](?: [^>]*)?>.*?</t[hd]>", row)
            for row in body.split("</tr>")[:-1]]


def _tasks(values: dict[str, dict[str, list[float]]]) -> ComparisonResult:
    """A result with one column per task (``values[task][method]`` per trial) and their
    average."""
    rows = []
    methods = list(next(iter(values.values())))
    for method in methods:
        for trial in range(len(values[next(iter(values))][method])):
            per_task = [values[task][method][trial] for task in values]
            for task, value in zip(values, per_task, strict=True):
                rows.append((method, trial, task, "error_rate", value, 0.0, "{}"))
            rows.append((method, trial, "average", "error_rate", sum(per_task) / len(per_task),
                         0.0, "{}"))
    frame = pd.DataFrame(rows, columns=["method", "trial", "task", "metric", "value",
                                        "fit_time_s", "params"])
    return ComparisonResult(frame, methods=methods, task_names=list(values),
                            greater_is_better={"error_rate": False})


def test_only_a_clear_winner_is_marked_and_the_average_comes_first():
    result = _tasks({"T0 clear": {"a": BEST, "b": LOSER},
                     "T1 close": {"a": BEST, "b": TIE}})
    assert clearly_best(result).to_dict() == {"T0 clear": "a", "T1 close": None,
                                              "average": "a"}
    table = page_table_html(result)
    heads = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", table.split("<tbody>")[0])
    assert heads == ["method", "average", "T0 clear", "T1 close"]
    rows = _cells(table)
    assert [re.sub(r"<[^>]+>", "", row[0]) for row in rows] == ["a", "b"]
    marked = [(i, j) for i, row in enumerate(rows) for j, cell in enumerate(row)
              if "clear-best" in cell]
    assert marked == [(0, 1), (0, 2)]       # a's average and T0; T1 (a close call): none
    assert all(CLEAR_MARK in rows[i][j] for i, j in marked)
    assert table.count(CLEAR_MARK) == 2 + 1                    # and once in the caption
    assert "<strong>" not in table and "<b>" not in table      # no bold ties any more
    # the mean, and the spread on a line of its own (a narrow column)
    assert re.search(r'0\.112<span class="spread">± 0\.015</span>', rows[0][3])
    caption = re.search(r'</table><p class="mtl-caption">(.*)</p>$', table).group(1)
    assert "6 trials" in caption and CLEAR_MARK in caption and "paired t-test" in caption


def test_with_few_trials_and_close_methods_nothing_is_marked():
    result = constructed_result({"a": BEST[:3], "b": TIE[:3], "c": LOSER[:3]})
    assert result.best()["T0"].sum() >= 2                      # the paper's marking: ties
    assert set(clearly_best(result)) == {None}
    assert "clear-best" not in page_table_html(result)


def test_the_report_marks_best_as_the_page_does():
    """One marking: the downloaded report's table is the page's, a close call unmarked in
    both (the papers' "best or not significantly worse" would mark both of T1's methods)."""
    result = _tasks({"T0 clear": {"a": BEST, "b": LOSER},
                     "T1 close": {"a": BEST, "b": TIE}})
    assert result.best()["T1 close"].all()                    # the papers' marking: a tie
    page = page_table_html(result)
    report = report_html(result)
    assert page in report
    table = report.split('<table class="mtl-compare')[1].split("</table>")[0]
    assert table.count("clear-best") == 2 and table.count(CLEAR_MARK) == 2  # average, T0
    assert report.count('<table class="mtl-compare') == 1      # no second table, other marks
    assert 'class="best"' not in report and "<strong>" not in report
    assert "td.clear-best { background: #1f4e9c" in " ".join(report.split())


def test_the_mark_reads_on_a_projector():
    """A filled dark cell with white text (contrast far above WCAG AA's 4.5), every font at
    least 12 px, long names allowed to wrap, the average set apart."""
    css = " ".join(TABLE_CSS.split())
    assert "td.clear-best { background: #1f4e9c; color: #ffffff" in css
    sizes = [int(px) for px in re.findall(r"font-size: (\d+)px", css)]
    assert sizes and min(sizes) >= 12
    assert "white-space: normal" in css and ".average {" in css

    def luminance(hex_colour: str) -> float:
        channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4
                  for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    assert (luminance("#ffffff") + 0.05) / (luminance("#1f4e9c") + 0.05) > 7


def test_names_are_escaped():
    result = constructed_result({"a<b>&c": BEST, "plain": LOSER}, task="x<y>")
    table = page_table_html(result)
    assert "a&lt;b&gt;&amp;c" in table and "x&lt;y&gt;" in table and "<b>" not in table


def test_the_status_names_the_best_and_whom_it_is_not_clearly_ahead_of():
    clear = constructed_result({"b": LOSER, "a": BEST})
    assert best_on_average(clear) == f"Best on average: **a** ({CLEAR_MARK}: clearly)."
    close = constructed_result({"tie": TIE, "a<x>": BEST, "c": LOSER})
    assert best_on_average(close) == ("Best on average: **a&lt;x&gt;**, not clearly ahead of "
                                      "**tie** (paired t-test, 5%).")
