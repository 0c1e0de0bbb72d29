"""Geometry and colours of the tree diagram (no Bokeh): pure functions, in screen pixels.

The diagram (:class:`explorer.viz.tree.TreeDiagram`) draws in a frame where one data unit is
one screen pixel, so boxes sized here from their labels hold their text exactly as drawn:

* :func:`text_width` -- an upper estimate of a label's width in pixels (Helvetica/Liberation
  Sans metrics: digits and lower case ~0.56 em, capitals ~0.72 em);
* :func:`tidy_x` -- a tidy layout (Reingold & Tilford 1981, with each node's own width): the
  two subtrees of a node are pushed apart until, at every depth, their contours keep a gap,
  and the node sits midway over its children. No two nodes of one depth overlap, whatever
  their widths, and a narrow subtree may tuck under a wide neighbour's short branch;
* :func:`class_palette` -- class colours that no task colour in use resembles (CIELAB
  distance), so a colour on the Trees page means either a task or a class, never both.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from bokeh.palettes import Category10_10, Category20_20

__all__ = ["class_palette", "delta_e", "shorten", "text_width", "tidy_x"]

#: Widths of characters in em: Liberation Sans (Chromium's "helvetica" on Linux) measures
#: 0.49-0.56 em for digits and lower case; capitals and wide glyphs are given more.
_WIDE = set("ABCDEFGHKMNOQRUVWXYmw@%&≤≥")


def text_width(text: str, font_px: float) -> float:
    """Width in pixels of the widest line of ``text`` at ``font_px``, estimated from above.

    >>> text_width("x1\\n<= 0.5", 10)
    36.0
    """
    return max((font_px * sum(0.72 if c in _WIDE else 0.6 for c in line)
                for line in str(text).split("\n")), default=0.0)


def shorten(text: str, max_chars: int) -> str:
    """``text`` cut to ``max_chars`` characters, the cut marked by an ellipsis.

    >>> shorten("worst concave points", 8), shorten("px12", 8)
    ('worst c…', 'px12')
    """
    text = str(text)
    return text if len(text) <= max_chars else text[:max_chars - 1] + "…"


def tidy_x(children: Mapping[int, tuple[int, int]], extent: Mapping[int, tuple[float, float]],
           gap: float, root: int = 0) -> dict[int, float]:
    """x of every node below ``root`` (``root`` at 0) so that nodes of one depth keep ``gap``.

    ``children[n] = (left, right)`` for split nodes (others are leaves); ``extent[n] = (lo,
    hi)``: how far node ``n`` reaches left (``lo <= 0``) and right (``hi >= 0``) of its x.

    >>> tidy_x({0: (1, 2)}, {0: (-30, 30), 1: (-10, 10), 2: (-10, 10)}, gap=4)
    {0: 0.0, 1: -12.0, 2: 12.0}
    """
    offset: dict[int, float] = {}          # x of a node relative to its parent

    def contour(node: int) -> list[tuple[float, float]]:
        """Per depth below ``node`` (``node`` first): the (lo, hi) reached, relative to it."""
        lo, hi = extent[node]
        kids = children.get(node)
        if kids is None:
            return [(lo, hi)]
        left, right = (contour(k) for k in kids)
        shift = max(left[d][1] + gap - right[d][0] for d in range(min(len(left), len(right))))
        offset[kids[0]], offset[kids[1]] = -shift / 2, shift / 2
        merged = [(lo, hi)]
        for d in range(max(len(left), len(right))):
            parts = [(a - shift / 2, b - shift / 2) for a, b in left[d:d + 1]]
            parts += [(a + shift / 2, b + shift / 2) for a, b in right[d:d + 1]]
            merged.append((min(p[0] for p in parts), max(p[1] for p in parts)))
        return merged

    contour(root)
    x = {root: 0.0}
    stack = [root]
    while stack:
        node = stack.pop()
        for kid in children.get(node, ()):
            x[kid] = x[node] + offset[kid]
            stack.append(kid)
    return x


def _lab(color: str) -> np.ndarray:
    """CIELAB coordinates of a ``#rrggbb`` colour (sRGB, D65)."""
    rgb = np.array([int(color[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    rgb = np.where(rgb > 0.04045, ((rgb + 0.055) / 1.055) ** 2.4, rgb / 12.92)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ rgb / np.array([0.9505, 1.0, 1.089])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


#: Lightness counts half in :func:`delta_e`: a light and a dark orange are still "orange".
_LAB_WEIGHT = np.array([0.5, 1.0, 1.0])


def delta_e(a: str, b: str) -> float:
    """Colour difference of two ``#rrggbb`` colours: CIE76 with lightness weighted half, so
    tints of one hue stay close (the app's task orange and label orange differ by 10).

    >>> round(delta_e("#000000", "#ffffff"))
    50
    """
    return float(np.linalg.norm((_lab(a) - _lab(b)) * _LAB_WEIGHT))


#: Candidate class colours, the app's label colours (Category10) first.
_CLASS_POOL = (*Category10_10, "#bdbdbd", "#08519c", "#a50f15", "#54278f",
               *(c for c in Category20_20 if c not in Category10_10))


def class_palette(n_classes: int, task_colors: Sequence[str], *, min_task_distance=40.0,
                  min_class_distance=25.0) -> list[str]:
    """``n_classes`` colours, each at least ``min_task_distance`` (CIELAB) from every colour
    in ``task_colors`` and ``min_class_distance`` from each other; the label colours
    (Category10) come first where they qualify. Past what the pool can give the distances are
    relaxed, then colours repeat.

    >>> class_palette(2, ["#1b9e77", "#d95f02"])   # no orange: it is task T1's colour
    ['#1f77b4', '#9467bd']
    """
    tasks = [_lab(c) * _LAB_WEIGHT for c in dict.fromkeys(task_colors)]
    pool = [(c, _lab(c) * _LAB_WEIGHT) for c in _CLASS_POOL]
    chosen: list[tuple[str, np.ndarray]] = []
    for scale in (1.0, 0.75, 0.5, 0.0):
        for color, lab in pool:
            if len(chosen) == n_classes:
                break
            if any(color == c for c, _ in chosen):
                continue
            if (all(np.linalg.norm(lab - t) >= scale * min_task_distance for t in tasks)
                    and all(np.linalg.norm(lab - c) >= scale * min_class_distance
                            for _, c in chosen)):
                chosen.append((color, lab))
    colors = [c for c, _ in chosen]
    return [colors[k % len(colors)] for k in range(n_classes)]
