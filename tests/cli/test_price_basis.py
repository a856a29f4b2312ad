"""Issue 30 item 7: "cheapest" compares one kind of price. Each preset price says how it is billed (price_basis:
an on-demand instance's list price, or serverless per-second work); plan compares on-demand list prices (and the
user's --price-per-hour), leaves the others out by name, and says the basis in its verdict."""

from __future__ import annotations

import json

import pytest

from roofline.presets import load_catalog
from roofline.presets.loader import PRICE_BASES
from tests.conftest import run_cli

BASE = ["plan", "--model", "llama-3.1-8b", "--prompt", "1024", "--output", "256", "--concurrency", "1,4"]


@pytest.fixture(autouse=True)
def _no_user_presets(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_PRESETS", str(tmp_path / "no-user-presets"))


def test_every_priced_preset_says_how_its_price_is_billed():
    catalog = load_catalog()
    priced = [hw for hw in catalog.hardware.values() if hw.price_usd_per_hour is not None]
    assert priced
    for hw in priced:
        assert hw.price_basis in PRICE_BASES and hw.price_basis, hw.id
        if hw.price_basis == "serverless":
            assert any(word in hw.price_source.lower() for word in ("serverless", "modal")), hw.id


def _plan(capsys, *argv):
    code, out, err = run_cli([*BASE, *argv, "--format", "json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_a_serverless_price_is_left_out_of_cheapest_by_name(capsys):
    plan = _plan(capsys, "--hardware", "h100-sxm,h200")
    cheapest = plan["cheapest"]
    assert cheapest["hardware"] == "h100-sxm" and cheapest["without_comparable_price"] == ["h200"]
    assert "on-demand" in cheapest["price_basis"]
    code, out, _ = run_cli([*BASE, "--hardware", "h100-sxm,h200"], capsys)
    assert "prices compared: on-demand list prices" in out and "left out of cheapest" in out and "h200" in out


def test_the_users_prices_are_compared(capsys):
    plan = _plan(capsys, "--hardware", "h100-sxm,h200", "--price-per-hour", "9,1")
    assert plan["cheapest"]["hardware"] == "h200" and plan["cheapest"]["without_comparable_price"] == []


def test_only_serverless_prices_means_no_cheapest(capsys):
    plan = _plan(capsys, "--hardware", "h200,b200")
    assert plan["cheapest"] is None


def test_a_bad_price_basis_names_the_key(tmp_path, monkeypatch, capsys):
    from roofline.presets.loader import builtin_presets_dir

    folder = tmp_path / "user"
    (folder / "hardware").mkdir(parents=True)
    text = (builtin_presets_dir() / "hardware" / "h100-sxm.toml").read_text()
    text = text.replace('id = "h100-sxm"', 'id = "odd-gpu"').replace('price_basis = "on-demand"',
                                                                      'price_basis = "spot"')
    (folder / "hardware" / "odd-gpu.toml").write_text(text)
    monkeypatch.setenv("ROOFLINE_PRESETS", str(folder))
    code, out, err = run_cli(["report", "--hardware", "odd-gpu"], capsys)
    assert code == 2 and "price_basis" in err and len(err.strip().splitlines()) == 1
