"""One line that says what is on screen: device and count, model and precisions, batch, lengths, ceilings.

Shown in the explorer's header, on slides and so in every saved screenshot, e.g.
``H100 SXM x4 / Llama 3.1 70B fp8, KV bf16 / batch 16 / 1,024 -> 256 / bound``.
"""

from __future__ import annotations

from roofline.models.scenario import Scenario


def short_device_name(name: str) -> str:
    """``NVIDIA H100 SXM5 80GB`` -> ``H100 SXM5 80GB``: the vendor is implied by the part."""
    for vendor in ("NVIDIA ", "AMD ", "Intel ", "Apple ", "Google "):
        if name.startswith(vendor):
            return name[len(vendor):]
    return name


def scenario_summary(scenario: Scenario, estimate_name: str, operating: str | None = None) -> str:
    """``operating``: the serving operating point ("C=16", "20 req/s (C=14.2)") in place of the static batch."""
    hw, m, p, b, par = scenario.hardware, scenario.model, scenario.precisions, scenario.batching, scenario.parallelism
    devices = f"x{par.devices}" + (f" (tp {par.tp}, pp {par.pp})" if par.pp > 1 else "")
    engine = "" if scenario.engine == "generic" else f", {scenario.engine}"
    return " / ".join((f"{short_device_name(hw.name)} {devices}", f"{m.name} {p.weights}, KV {p.kv}",
                       operating or f"batch {b.batch_size:,}", f"{b.prompt_tokens:,} -> {b.output_tokens:,}",
                       f"{estimate_name}{engine}"))


def context_warning(scenario: Scenario) -> str:
    """'' when the longest context fits the model's maximum, else what exceeds it."""
    m, b = scenario.model, scenario.batching
    final = b.prompt_tokens + b.output_tokens
    limit = m.max_position_embeddings
    if limit and final > limit:
        return f"context {final:,} is past {m.name}'s maximum of {limit:,} tokens: the model was not trained for it"
    return ""
