"""Every scenario input, described once: the CLI flags, the explorer's fields, scenario files and decks follow it.

One :class:`ScenarioInput` per input says what it is called on screen, its unit, its accepted range, its default,
its command-line flag, its key in scenario files and decks, what an empty optional field means and which model
error names it. Adding an input means adding a record here (and, if the maths changes, in ``models/``).

Defaults of the workload come from the model's own :class:`~roofline.models.scenario.Batching`, so the core, the
CLI and the explorer cannot disagree (they once did: a 512-token prompt in the core, 1024 everywhere else).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, KV_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT
from roofline.models.engines import DEFAULT_ENGINE, ENGINES
from roofline.models.scenario import Batching, Parallelism
from roofline.models.topology import TOPOLOGIES

_BATCHING_DEFAULTS = {f.name: f.default for f in fields(Batching)}
_PARALLEL_DEFAULTS = {f.name: f.default for f in fields(Parallelism)}

DEFAULT_HARDWARE = "h100-sxm"
DEFAULT_MODEL = "llama-3.1-8b"


@dataclass(frozen=True, slots=True, kw_only=True)
class ScenarioInput:
    """One input a person can set. ``kind``: ``int``, ``float``, ``bool``, ``dtype`` (a choice), ``id`` (a preset
    id or a config.json path). Numbers have ``low``..``high``; ``optional`` numbers may be empty, which means
    ``empty_means`` (said in the status line: "showing bandwidth from the preset")."""

    name: str  # the form's field (ScenarioForm) and the explorer widget's id
    label: str  # on screen and in error messages
    kind: str
    default: Any = None
    unit: str = ""
    low: float | None = None
    high: float | None = None
    optional: bool = False
    empty_means: str = ""
    flag: str | None = None  # the command-line flag; None: not a flag
    file_key: str | None = None  # key in scenario files and decks; None: not saved
    choices: tuple[str, ...] = ()
    model_error_fields: tuple[str, ...] = ()  # ModelInputError.field values that this input answers for
    help: str = ""
    in_form: bool = True  # an explorer field (False: CLI and files only)

    @property
    def whole(self) -> bool:
        return self.kind == "int"

    @property
    def file_type(self) -> type:
        return {"int": int, "float": float, "bool": bool}.get(self.kind, str)


INPUTS: tuple[ScenarioInput, ...] = (
    ScenarioInput(name="hardware_id", label="hardware", kind="id", default=DEFAULT_HARDWARE, flag="--hardware",
                  file_key="hardware", model_error_fields=("hardware",),
                  help="hardware preset id (roofline presets hardware)"),
    ScenarioInput(name="tp", label="devices tp", kind="int", default=_PARALLEL_DEFAULTS["tp"], low=1, high=1024,
                  flag="--tp", file_key="tp", model_error_fields=("tp",), help="tensor-parallel devices"),
    ScenarioInput(name="pp", label="stages pp", kind="int", default=_PARALLEL_DEFAULTS["pp"], low=1, high=1024,
                  flag="--pp", file_key="pp", model_error_fields=("pp",), help="pipeline stages"),
    ScenarioInput(name="mem_bw_override_gb_per_s", label="bandwidth GB/s", kind="float", unit="GB/s", low=0.01,
                  high=1_000_000.0, optional=True, empty_means="from the preset", flag="--mem-bw-gb-per-s",
                  file_key="mem_bw_override_gb_per_s", help="override the preset's memory bandwidth"),
    ScenarioInput(name="peak_override_tflops", label="peak TFLOP/s", kind="float", unit="TFLOP/s", low=0.001,
                  high=10_000_000.0, optional=True, empty_means="from the preset", flag="--peak-tflops",
                  file_key="peak_override_tflops", help="override the preset's dense peak for the compute dtype"),
    ScenarioInput(name="capacity_override_gib", label="capacity GiB", kind="float", unit="GiB", low=0.001,
                  high=100_000.0, optional=True, empty_means="from the preset", flag="--capacity-gib",
                  file_key="capacity_override_gib", help="override the preset's memory per device"),
    ScenarioInput(name="price_per_device_hour", label="$ / device-hour", kind="float", unit="$/h", low=0.0001,
                  high=1_000_000.0, optional=True, empty_means="none", flag="--price-per-hour",
                  file_key="price_per_device_hour", help="price of one device for an hour, for $ per million tokens"),
    ScenarioInput(name="topology", label="topology", kind="dtype", default=None, flag="--topology",
                  file_key="topology", choices=tuple(TOPOLOGIES), model_error_fields=("topology",),
                  empty_means="from the hardware preset", help="how the TP group's devices are linked"),
    ScenarioInput(name="engine", label="engine", kind="dtype", default=DEFAULT_ENGINE, flag="--engine",
                  file_key="engine", choices=tuple(ENGINES), model_error_fields=("engine",),
                  help="serving stack whose kernels and overheads expected assumes"),
    ScenarioInput(name="model_ref", label="model", kind="id", default=DEFAULT_MODEL, flag="--model",
                  file_key="model", model_error_fields=("model",),
                  help="model preset id, or a local Hugging Face config.json (file or folder)"),
    ScenarioInput(name="weights", label="weights", kind="dtype", default=None, flag="--weights", file_key="weights",
                  choices=tuple(WEIGHT_BITS_PER_ELEMENT), model_error_fields=("weights",),
                  empty_means="the model's released format, else bf16", help="weight format"),
    ScenarioInput(name="expert_weights", label="expert weights", kind="dtype", default=None,
                  flag="--expert-weights", file_key="expert_weights", choices=tuple(WEIGHT_BITS_PER_ELEMENT),
                  model_error_fields=("expert_weights",), empty_means="the model's released format, else --weights",
                  help="routed MoE expert weight format", in_form=False),
    ScenarioInput(name="activations", label="activations", kind="dtype", default=None, flag="--activations",
                  file_key="activations", choices=tuple(ACTIVATION_BITS_PER_ELEMENT),
                  model_error_fields=("activations",), empty_means="the model's released format, else bf16",
                  help="activation format"),
    ScenarioInput(name="kv", label="KV cache", kind="dtype", default="bf16", flag="--kv", file_key="kv",
                  choices=tuple(KV_BITS_PER_ELEMENT), model_error_fields=("kv",), help="KV-cache format"),
    ScenarioInput(name="batch", label="batch", kind="int", default=_BATCHING_DEFAULTS["batch_size"], low=1,
                  high=1 << 20, flag="--batch", file_key="batch", model_error_fields=("batch_size",),
                  help="sequences decoded together"),
    ScenarioInput(name="prompt_tokens", label="prompt tokens", kind="int", unit="tokens",
                  default=_BATCHING_DEFAULTS["prompt_tokens"], low=1, high=10_000_000, flag="--prompt",
                  file_key="prompt_tokens", model_error_fields=("prompt_tokens",), help="prompt tokens per sequence"),
    ScenarioInput(name="output_tokens", label="output tokens", kind="int", unit="tokens",
                  default=_BATCHING_DEFAULTS["output_tokens"], low=1, high=1_000_000, flag="--output",
                  file_key="output_tokens", model_error_fields=("output_tokens",),
                  help="generated tokens per sequence"),
    ScenarioInput(name="flash_attention", label="FlashAttention", kind="bool",
                  default=_BATCHING_DEFAULTS["flash_attention"], flag="--flash-attention", file_key="flash_attention",
                  help="fused attention (no score-matrix round trip)"),
    ScenarioInput(name="kv_compression_ratio", label="KV compression x", kind="float",
                  default=_BATCHING_DEFAULTS["kv_compression_ratio"], low=1.0, high=1000.0, flag="--kv-compression",
                  file_key="kv_compression_ratio", model_error_fields=("kv_compression_ratio",),
                  help="extra KV-cache compression factor beyond the KV format"),
    # serving mode (issue 19): a continuous-batching engine in steady state (models/serving/); `roofline plan` has
    # the same flags, for several concurrencies and devices at once
    ScenarioInput(name="serving", label="serving mode", kind="bool", default=False, flag="--serving",
                  file_key="serving", help="continuous-batching serving: headline numbers at the concurrency (or "
                  "the rate) on the latency-throughput frontier, instead of one static batch"),
    ScenarioInput(name="concurrency", label="concurrency", kind="int", unit="requests", default=16, low=1,
                  high=1_000_000, flag="--concurrency", file_key="concurrency", model_error_fields=("concurrency",),
                  help="serving: requests in flight (closed loop)"),
    ScenarioInput(name="rate_per_s", label="rate req/s", kind="float", unit="req/s", low=0.0001, high=1e9,
                  optional=True, empty_means="none: the concurrency sets the operating point", flag="--rate",
                  file_key="rate_per_s", model_error_fields=("rate",),
                  help="serving: arrival rate, requests/s (the operating point, and the devices that carry it)"),
    ScenarioInput(name="itl_target_ms", label="ITL target ms", kind="float", unit="ms", default=50.0, low=0.001,
                  high=10_000_000.0, flag="--itl-ms", file_key="itl_target_ms",
                  help="serving: target inter-token latency, ms"),
    ScenarioInput(name="ttft_target_ms", label="TTFT target ms", kind="float", unit="ms", default=1000.0, low=0.001,
                  high=10_000_000.0, flag="--ttft-ms", file_key="ttft_target_ms",
                  help="serving: target time to first token, ms"),
    ScenarioInput(name="prefix_tokens", label="prefix tokens", kind="int", unit="tokens", default=0, low=0,
                  high=10_000_000, flag="--prefix-tokens", file_key="prefix_tokens",
                  model_error_fields=("prefix_tokens",), help="serving: shared prompt prefix, tokens (prefix cache)"),
    ScenarioInput(name="prefix_hit_rate", label="prefix hit", kind="float", default=0.0, low=0.0, high=1.0,
                  flag="--prefix-hit", file_key="prefix_hit_rate", model_error_fields=("prefix_hit_rate",),
                  help="serving: share of requests whose prefix is cached, 0..1"),
    ScenarioInput(name="spec_tokens", label="spec tokens", kind="int", unit="tokens", default=0, low=0, high=64,
                  flag="--spec-tokens", file_key="spec_tokens", model_error_fields=("spec_tokens",),
                  help="serving: speculative tokens per step, drafted by one MTP layer of the target (0: off)"),
    # 0.7: an illustrative acceptance rate, not a measured one (it depends on the draft, the model and the text)
    ScenarioInput(name="spec_acceptance", label="acceptance", kind="float", default=0.7, low=0.0, high=1.0,
                  flag="--accept", file_key="spec_acceptance", model_error_fields=("accept",),
                  help="serving: probability that a drafted token is accepted, 0..1"),
    ScenarioInput(name="shown_context", label="show step at ctx", kind="int", unit="tokens", low=1,
                  high=100_000_000, optional=True, empty_means="at the mean of the generation",
                  help="the decode step the views show (explorer only)"),
)

BY_NAME: dict[str, ScenarioInput] = {i.name: i for i in INPUTS}
BY_FILE_KEY: dict[str, ScenarioInput] = {i.file_key: i for i in INPUTS if i.file_key}
NUMBER_INPUTS = tuple(i for i in INPUTS if i.kind in ("int", "float"))
# the serving mode's inputs (a static batch ignores them; `roofline plan` has its own flags for them)
SERVING_INPUTS = ("serving", "concurrency", "rate_per_s", "itl_target_ms", "ttft_target_ms", "prefix_tokens",
                  "prefix_hit_rate", "spec_tokens", "spec_acceptance")
# the form's fields that live in the scenario (shown_context is a view setting, kept beside it)
FORM_FIELDS = tuple(i.name for i in INPUTS if i.name != "shown_context")
# everything a scenario file or a deck's [slides.scenario] may hold, with its TOML type
FILE_KEY_TYPES: dict[str, type] = {i.file_key: i.file_type for i in INPUTS if i.file_key}
# ModelInputError.field -> the input to mark (and the flag to blame)
_MODEL_ERROR_TO_INPUT = {field: i.name for i in INPUTS for field in i.model_error_fields}
# widget ids that are not scenario inputs but still get labels and status messages
_EXTRA_LABELS = {"config_path": "config.json"}


def input_for_model_error(field: str) -> str:
    """The input a model error is about (``batch_size`` -> ``batch``); unknown fields pass through."""
    return _MODEL_ERROR_TO_INPUT.get(field, field)


def label(name: str) -> str:
    """What a field is called on screen (and so in its messages)."""
    found = BY_NAME.get(name)
    return found.label if found else _EXTRA_LABELS.get(name, name.replace("_", " "))


def flag_for(name: str) -> str:
    """The flag a user typed for an input or a model error field (for one-line CLI errors)."""
    found = BY_NAME.get(input_for_model_error(name))
    return found.flag if found and found.flag else name
