"""Issue 30 item 16: a measured value too small to be a measurement (a subnormal 1e-310 made expected/measured
overflow, and ``validate --format json`` printed Infinity and NaN) skips its row with the reason."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from roofline.presets.measurements import MIN_MEASURED_VALUE, read_measurements
from tests.conftest import run_cli

DEV = Path(__file__).parents[1] / "data" / "measured-dev-validation.csv"


def _one_row_csv(tmp_path: Path, value: str) -> Path:
    header, first = DEV.read_text().splitlines()[:2]
    cells = first.split(",")
    value_at = header.split(",").index("value")
    cells[value_at] = value
    path = tmp_path / "rows.csv"
    path.write_text(f"{header}\n{','.join(cells)}\n")
    return path


@pytest.mark.parametrize("value", ["1e-310", "5e-324", "1e-307", "1e-12"])
def test_a_value_below_the_floor_skips_its_row_with_the_reason(tmp_path, value):
    rows, skipped = read_measurements(_one_row_csv(tmp_path, value))
    assert rows == [] and len(skipped) == 1
    assert "not a measurement" in str(skipped[0])


def test_the_floor_keeps_real_rows(tmp_path):
    rows, skipped = read_measurements(_one_row_csv(tmp_path, "104.9"))
    assert len(rows) == 1 and skipped == []
    assert MIN_MEASURED_VALUE <= 1e-6  # far below any published tokens/s or ms


@pytest.mark.parametrize("value", ["1e-310", "1e-307", "1e-9", "1e300"])
def test_validate_json_has_no_infinity_or_nan(tmp_path, capsys, value):
    code, out, err = run_cli(["validate", str(_one_row_csv(tmp_path, value)), "--format", "json"], capsys)
    assert "Infinity" not in out and "NaN" not in out

    def finite(item):
        if isinstance(item, float):
            assert math.isfinite(item)
        elif isinstance(item, dict):
            for v in item.values():
                finite(v)
        elif isinstance(item, list):
            for v in item:
                finite(v)

    if code == 0:
        finite(json.loads(out))
