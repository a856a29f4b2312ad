"""Our `scenario_report` against LLM-Viewer's `analyze_generate_task`, side by side in one run.

Run: .venv/bin/python benchmarks/compare_llm_viewer.py /tmp/llm-viewer [--rounds 5]
(a copy of github.com/hahnyuan/LLM-Viewer outside this repository; none of its code is in it). The scenario is the
issue's: A100 SXM4 80GB, Llama-2-7B, batch 1, prompt 1024, output 16,384 tokens, 16-bit weights, activations and KV.
LLM-Viewer analyses every decode step one by one (`analyze` at each of the 16,384 contexts); ours sums the decode
steps in closed form (models/context_sums.py) and adds the ops table and the uncertainty band (15 more estimates).

LLM-Viewer reads the model's shape with `transformers.AutoConfig.from_pretrained`, which needs the network; this
script puts a stand-in `transformers` module in `sys.modules` whose `AutoConfig` returns Llama-2-7B's published
config.json figures (huggingface.co/meta-llama/Llama-2-7b-hf: hidden 4096, intermediate 11008, 32 layers, 32 heads
and 32 KV heads, vocabulary 32000), the only fields its `configs/Llama.py` reads. The programs take turns
(LLM-Viewer, ours, LLM-Viewer, ...); each round times ours as the median of 50 calls.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import statistics
import sys
import time
import types
from pathlib import Path

PROMPT_TOKENS, OUTPUT_TOKENS, BATCH = 1024, 16384, 1
LLAMA_2_7B_CONFIG = {"hidden_size": 4096, "intermediate_size": 11008, "num_hidden_layers": 32,
                     "num_attention_heads": 32, "num_key_value_heads": 32, "vocab_size": 32000}


def _stand_in_transformers() -> None:
    """A `transformers` module with the three names LLM-Viewer imports; only `AutoConfig.from_pretrained` is called."""
    module = types.ModuleType("transformers")

    class AutoConfig:
        @staticmethod
        def from_pretrained(model_id: str, **_: object) -> types.SimpleNamespace:
            if "Llama-2-7b" not in model_id:
                raise ValueError(f"stand-in AutoConfig knows Llama-2-7B only, not {model_id}")
            return types.SimpleNamespace(**LLAMA_2_7B_CONFIG)

    module.AutoConfig = AutoConfig
    module.AutoTokenizer = module.AutoModelForCausalLM = object
    sys.modules.setdefault("transformers", module)


def llm_viewer_task(path: Path):
    """A callable running LLM-Viewer's analyze_generate_task on the scenario (its prints swallowed)."""
    _stand_in_transformers()
    sys.path.insert(0, str(path))
    os.chdir(path)  # it finds configs/ and model_params/ relative to the working folder
    with contextlib.redirect_stdout(io.StringIO()):
        from model_analyzer import ModelAnalyzer  # noqa: PLC0415 (imported from the given folder only)

        analyzer = ModelAnalyzer("meta-llama/Llama-2-7b-hf", "nvidia_A100_80G", config_file="configs/Llama.py")

    def run() -> float:
        with contextlib.redirect_stdout(io.StringIO()):
            return analyzer.analyze_generate_task(PROMPT_TOKENS, OUTPUT_TOKENS, BATCH)["inference_time"]

    return run


def our_report():
    from roofline.models.report import scenario_report
    from roofline.models.scenario import Batching, Scenario
    from roofline.presets import load_hardware, load_model

    scenario = Scenario(hardware=load_hardware("a100-sxm4-80gb"), model=load_model("llama-2-7b"),
                        batching=Batching(batch_size=BATCH, prompt_tokens=PROMPT_TOKENS, output_tokens=OUTPUT_TOKENS))
    return lambda: scenario_report(scenario)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("llm_viewer", type=Path, help="folder of an LLM-Viewer checkout (outside this repository)")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    if not (args.llm_viewer / "model_analyzer.py").is_file():
        print(f"skipped: no LLM-Viewer at {args.llm_viewer} (model_analyzer.py not found); clone "
              "github.com/hahnyuan/LLM-Viewer there")
        return 0
    ours = our_report()
    theirs = llm_viewer_task(args.llm_viewer.resolve())
    ours(), theirs()  # warm-up, untimed
    their_s, our_s = [], []
    for _ in range(args.rounds):
        start = time.perf_counter()
        seconds = theirs()
        their_s.append(time.perf_counter() - start)
        calls = []
        for _ in range(50):
            start = time.perf_counter()
            report = ours()
            calls.append(time.perf_counter() - start)
        our_s.append(statistics.median(calls))
    theirs_med, ours_med = statistics.median(their_s), statistics.median(our_s)
    print(f"A100 80GB, Llama-2-7B, batch {BATCH}, prompt {PROMPT_TOKENS}, output {OUTPUT_TOKENS:,}; "
          f"{args.rounds} rounds")
    print(f"LLM-Viewer analyze_generate_task: {theirs_med * 1e3:9.1f} ms  (rounds {min(their_s) * 1e3:.1f}-"
          f"{max(their_s) * 1e3:.1f}; generation {seconds:.2f} s)")
    print(f"roofline scenario_report:         {ours_med * 1e3:9.2f} ms  (rounds {min(our_s) * 1e3:.2f}-"
          f"{max(our_s) * 1e3:.2f}; expected generation {report['expected']['generation']['time_s']:.2f} s, "
          f"bound {report['bound']['generation']['time_s']:.2f} s)")
    print(f"LLM-Viewer / ours: {theirs_med / ours_med:,.0f}x (aim: at least 1000x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
