"""Headline labels at narrow widths: a label that does not fit its column takes a short form that still names its
unit, never a cut one ("ceiling tok/s/" read as another unit at 80x24)."""

import pytest

from roofline.tui.explorer.headline import SHORT_LABELS, _fit_label
from roofline.tui.explorer.summary_widgets import estimate_label
from roofline.tui.views.serving_data import SERVING_LABELS

COLUMN_TEXT_AT_80 = 80 // 5 - 2  # five columns, a cell of padding each side


@pytest.mark.parametrize("label", [estimate_label("bound"), estimate_label("expected"), "aggregate tok/s",
                                   "TTFT ms (static)", *SERVING_LABELS.values()])
def test_every_headline_label_fits_a_column_at_80_columns_whole(label):
    fitted = _fit_label(label, COLUMN_TEXT_AT_80)
    assert len(fitted) <= COLUMN_TEXT_AT_80
    assert fitted == label or any(fitted in forms for forms in SHORT_LABELS.values()) or label.startswith(fitted + " (")


@pytest.mark.parametrize("width", [12, 13, 14])
def test_the_estimates_keep_their_unit_at_the_120_column_widths(width):
    for name in ("bound", "expected"):
        fitted = _fit_label(estimate_label(name), width)
        assert len(fitted) <= width and fitted.endswith("tok/s")


def test_a_label_that_fits_is_kept():
    assert _fit_label("ceiling tok/s/seq", 40) == "ceiling tok/s/seq"
    assert _fit_label("ceiling tok/s/seq", 14) == "ceiling tok/s"
