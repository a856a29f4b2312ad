"""Every scenario input, described once: the form, the CLI flags, the explorer's panes, scenario files, decks, the
validation rows and the README's flag table follow it.

One :class:`ScenarioInput` per input says what it is called on screen, its unit, its accepted range, its default,
its command-line flag, its key in scenario files and decks, what an empty optional field means, which model error
names it, which pane and group show it, and which model field it sets.

Defaults of the workload come from the model's own :class:`~roofline.models.scenario.Batching`, so the core, the
CLI and the explorer cannot disagree (they once did: a 512-token prompt in the core, 1024 everywhere else).

How to add an input (files touched: this one, and ``models/`` if the maths changes):

1. Add a :class:`ScenarioInput` to :data:`INPUTS` where its pane shows it (the tuple's order is the panes', the
   flags' and the README table's). ``model_field="ServingOptions.max_num_batched_tokens"`` hands its value to that
   model field: ``Batching``, ``Parallelism``, ``Scenario``, ``released_precisions``, ``ServingMix``,
   ``ServingOptions`` (see :func:`roofline.tui.inputs.form.model_kwargs`). The model's dataclass needs the field
   (``models/``), with its own check raising ``ModelInputError(field, ...)``; list that field in
   ``model_error_fields`` so the CLI names the flag and the explorer marks the field.
2. Run ``python -m roofline.tui.inputs.flag_table --write README.md`` (the README's flag table is generated;
   ``tests/inputs/test_flag_table.py`` checks it).

What follows from the record alone: the :class:`~roofline.tui.inputs.form.ScenarioForm` field, its range check
(flags, fields, files, decks), the flag on the explorer, ``report`` and ``plan`` (``plan`` takes every input but
``--batch`` and ``--serving``), the field in its pane, the scenario-file key, the label in messages.

Example, a prefill chunk size (the token budget a continuous-batching step prefills within)::

    ScenarioInput(name="prefill_chunk_tokens", label="prefill chunk", kind="int", unit="tokens",
                  default=DEFAULT_MAX_NUM_BATCHED_TOKENS, low=16, high=1_048_576, flag="--prefill-chunk",
                  file_key="prefill_chunk_tokens", model_field="ServingOptions.max_num_batched_tokens",
                  model_error_fields=("max_num_batched_tokens",), pane="batching", group="serving",
                  help="serving: tokens prefilled per step (chunked prefill budget)")

(with ``from roofline.models.serving.inputs import DEFAULT_MAX_NUM_BATCHED_TOKENS``) touches this file and
README.md's generated table only: ``ServingOptions`` already has the field, plan's ``--prefill-chunk 512`` and the
explorer's field reach it. One that
the model does not know yet also touches the model's dataclass in ``models/`` and the code there that uses it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from roofline.models.dtypes import ACTIVATION_BITS_PER_ELEMENT, KV_BITS_PER_ELEMENT, WEIGHT_BITS_PER_ELEMENT
from roofline.models.engines import DEFAULT_ENGINE
from roofline.models.scenario import Batching, Parallelism
from roofline.models.serving import ARRIVAL_MODELS
from roofline.models.topology import TOPOLOGIES
from roofline.presets.engine_profiles import engine_ids

_BATCHING_DEFAULTS = {f.name: f.default for f in fields(Batching)}
_PARALLEL_DEFAULTS = {f.name: f.default for f in fields(Parallelism)}

DEFAULT_HARDWARE = "h100-sxm"
DEFAULT_MODEL = "llama-3.1-8b"
# the explorer's input panes, in screen order, and the groups inputs belong to
PANES = ("hardware", "workload", "batching")
GROUPS = ("device", "overrides", "stack", "model", "precision", "workload", "view", "serving")


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
    pane: str = ""  # the explorer pane that shows it (one of PANES); "": no explorer field (CLI and files only)
    group: str = ""  # what it belongs to (one of GROUPS): "serving" inputs only count in serving mode, "view" ones
    # are view settings kept beside the scenario (not in the form, not saved)
    preset_kind: str = ""  # kind "id": the catalogue it names ("hardware", "models")
    widget_text: str = ""  # what the explorer's widget says: a checkbox's text, the option or placeholder for empty
    metavar: str = ""  # the flag's value in --help and the README ("" : the flag's first word in capitals)
    model_field: str = ""  # "Batching.batch_size": the model field it sets (form.model_kwargs); "": read by name
    choices_from: str = ""  # where a choice's values are data, not code ("presets/engines/"): the docs name it
    # rather than list values that change with a data file

    @property
    def whole(self) -> bool:
        return self.kind == "int"

    @property
    def file_type(self) -> type:
        return {"int": int, "float": float, "bool": bool}.get(self.kind, str)

    @property
    def value_type(self) -> object:
        """The form field's annotation: the file type, or None beside it when the input may be empty."""
        base = self.file_type
        return base | None if self.optional or self.default is None else base

    @property
    def flag_metavar(self) -> str:
        if self.metavar:
            return self.metavar
        return (self.flag or self.name).lstrip("-").split("-")[0].upper()

    def clamp(self, value: float) -> float | int:
        """A number moved into the input's range (a key that doubles the batch stops at the top)."""
        low = -math.inf if self.low is None else self.low
        high = math.inf if self.high is None else self.high
        clamped = min(max(value, low), high)
        return int(clamped) if self.whole else float(clamped)


INPUTS: tuple[ScenarioInput, ...] = (
    # ---- the Hardware pane
    ScenarioInput(name="hardware_id", label="hardware", kind="id", default=DEFAULT_HARDWARE, flag="--hardware",
                  file_key="hardware", model_error_fields=("hardware",), preset_kind="hardware", metavar="ID",
                  pane="hardware", group="device", help="hardware preset id (roofline presets hardware)"),
    ScenarioInput(name="tp", label="devices tp", kind="int", default=_PARALLEL_DEFAULTS["tp"], low=1, high=1024,
                  flag="--tp", file_key="tp", model_error_fields=("tp",), metavar="N", model_field="Parallelism.tp",
                  pane="hardware", group="device", help="tensor-parallel devices"),
    ScenarioInput(name="pp", label="stages pp", kind="int", default=_PARALLEL_DEFAULTS["pp"], low=1, high=1024,
                  flag="--pp", file_key="pp", model_error_fields=("pp",), metavar="N", model_field="Parallelism.pp",
                  pane="hardware", group="device", help="pipeline stages"),
    ScenarioInput(name="mem_bw_override_gb_per_s", label="bandwidth GB/s", kind="float", unit="GB/s", low=0.01,
                  high=1_000_000.0, optional=True, empty_means="from the preset", flag="--mem-bw-gb-per-s",
                  file_key="mem_bw_override_gb_per_s", metavar="GBPS", widget_text="preset", pane="hardware",
                  group="overrides", help="override the preset's memory bandwidth"),
    ScenarioInput(name="peak_override_tflops", label="peak TFLOP/s", kind="float", unit="TFLOP/s", low=0.001,
                  high=10_000_000.0, optional=True, empty_means="from the preset", flag="--peak-tflops",
                  file_key="peak_override_tflops", metavar="TFLOPS", widget_text="preset", pane="hardware",
                  group="overrides", help="override the preset's dense peak for the compute dtype"),
    ScenarioInput(name="capacity_override_gib", label="capacity GiB", kind="float", unit="GiB", low=0.001,
                  high=100_000.0, optional=True, empty_means="from the preset", flag="--capacity-gib",
                  file_key="capacity_override_gib", metavar="GIB", widget_text="preset", pane="hardware",
                  group="overrides", help="override the preset's memory per device"),
    ScenarioInput(name="price_per_device_hour", label="$ / device-hour", kind="float", unit="$/h", low=0.0001,
                  high=1_000_000.0, optional=True, empty_means="none", flag="--price-per-hour",
                  file_key="price_per_device_hour", model_field="ServingOptions.price_usd_per_hour",
                  model_error_fields=("price_usd_per_hour",), metavar="USD", widget_text="none", pane="hardware",
                  group="overrides", help="price of one device for an hour, for $ per million tokens"),
    ScenarioInput(name="engine", label="engine", kind="dtype", default=DEFAULT_ENGINE, flag="--engine",
                  file_key="engine", choices=engine_ids(), model_error_fields=("engine",), metavar="ENGINE",
                  model_field="Scenario.engine", choices_from="the engine profiles (roofline report names each "
                  "factor's source)", pane="hardware", group="stack",
                  help="serving stack whose kernels and overheads expected assumes"),
    ScenarioInput(name="topology", label="topology", kind="dtype", default=None, flag="--topology",
                  file_key="topology", choices=tuple(TOPOLOGIES), model_error_fields=("topology",),
                  empty_means="from the hardware preset", metavar="TOPOLOGY", widget_text="from the preset",
                  model_field="Scenario.topology", pane="hardware", group="stack",
                  help="how the TP group's devices are linked"),
    # ---- the Workload pane
    ScenarioInput(name="model_ref", label="model", kind="id", default=DEFAULT_MODEL, flag="--model",
                  file_key="model", model_error_fields=("model",), preset_kind="models", metavar="ID|PATH",
                  pane="workload", group="model",
                  help="model preset id, or a local Hugging Face config.json (file or folder)"),
    ScenarioInput(name="weights", label="weights", kind="dtype", default=None, flag="--weights", file_key="weights",
                  choices=tuple(WEIGHT_BITS_PER_ELEMENT), model_error_fields=("weights",), metavar="DTYPE",
                  empty_means="the model's released format, else bf16", widget_text="released format",
                  model_field="released_precisions.weights", pane="workload", group="precision",
                  help="weight format"),
    ScenarioInput(name="expert_weights", label="expert weights", kind="dtype", default=None,
                  flag="--expert-weights", file_key="expert_weights", choices=tuple(WEIGHT_BITS_PER_ELEMENT),
                  model_error_fields=("expert_weights",), empty_means="the model's released format, else --weights",
                  metavar="DTYPE", model_field="released_precisions.expert_weights", group="precision",
                  help="routed MoE expert weight format"),
    ScenarioInput(name="activations", label="activations", kind="dtype", default=None, flag="--activations",
                  file_key="activations", choices=tuple(ACTIVATION_BITS_PER_ELEMENT),
                  model_error_fields=("activations",), empty_means="the model's released format, else bf16",
                  metavar="DTYPE", widget_text="released format", model_field="released_precisions.activations",
                  pane="workload", group="precision", help="activation format"),
    ScenarioInput(name="kv", label="KV cache", kind="dtype", default="bf16", flag="--kv", file_key="kv",
                  choices=tuple(KV_BITS_PER_ELEMENT), model_error_fields=("kv",), metavar="DTYPE",
                  model_field="released_precisions.kv", pane="workload", group="precision", help="KV-cache format"),
    # ---- the Batching pane
    ScenarioInput(name="batch", label="batch", kind="int", default=_BATCHING_DEFAULTS["batch_size"], low=1,
                  high=1 << 20, flag="--batch", file_key="batch", model_error_fields=("batch_size",), metavar="B",
                  model_field="Batching.batch_size", pane="batching", group="workload",
                  help="sequences decoded together"),
    ScenarioInput(name="prompt_tokens", label="prompt tokens", kind="int", unit="tokens",
                  default=_BATCHING_DEFAULTS["prompt_tokens"], low=1, high=10_000_000, flag="--prompt",
                  file_key="prompt_tokens", model_error_fields=("prompt_tokens",), metavar="P",
                  model_field="Batching.prompt_tokens", pane="batching", group="workload",
                  help="prompt tokens per sequence"),
    ScenarioInput(name="output_tokens", label="output tokens", kind="int", unit="tokens",
                  default=_BATCHING_DEFAULTS["output_tokens"], low=1, high=1_000_000, flag="--output",
                  file_key="output_tokens", model_error_fields=("output_tokens",), metavar="G",
                  model_field="Batching.output_tokens", pane="batching", group="workload",
                  help="generated tokens per sequence"),
    ScenarioInput(name="flash_attention", label="FlashAttention", kind="bool",
                  default=_BATCHING_DEFAULTS["flash_attention"], flag="--flash-attention", file_key="flash_attention",
                  widget_text="FlashAttention (fused)", model_field="Batching.flash_attention", pane="batching",
                  group="workload", help="fused attention (no score-matrix round trip)"),
    ScenarioInput(name="kv_compression_ratio", label="KV compression x", kind="float",
                  default=_BATCHING_DEFAULTS["kv_compression_ratio"], low=1.0, high=1000.0, flag="--kv-compression",
                  file_key="kv_compression_ratio", model_error_fields=("kv_compression_ratio",), metavar="R",
                  model_field="Batching.kv_compression_ratio", pane="batching", group="workload",
                  help="extra KV-cache compression factor beyond the KV format"),
    ScenarioInput(name="shown_context", label="show step at ctx", kind="int", unit="tokens", low=1,
                  high=100_000_000, optional=True, empty_means="at the mean of the generation",
                  widget_text="mean of generation", pane="batching", group="view",
                  help="the decode step the views show (explorer only)"),
    # serving mode: a continuous-batching engine in steady state (models/serving/); `roofline plan` takes the same
    # flags (lists where it evaluates several values at once)
    ScenarioInput(name="serving", label="serving mode", kind="bool", default=False, flag="--serving",
                  file_key="serving", widget_text="serving mode", pane="batching", group="serving",
                  help="continuous-batching serving: headline numbers at the concurrency (or the rate) on the "
                  "latency-throughput frontier, instead of one static batch"),
    ScenarioInput(name="concurrency", label="concurrency", kind="int", unit="requests", default=16, low=1,
                  high=1_000_000, flag="--concurrency", file_key="concurrency", model_error_fields=("concurrency",),
                  metavar="N", pane="batching", group="serving", help="serving: requests in flight (closed loop)"),
    ScenarioInput(name="rate_per_s", label="rate req/s", kind="float", unit="req/s", low=0.0001, high=1e9,
                  optional=True, empty_means="none: the concurrency sets the operating point", flag="--rate",
                  file_key="rate_per_s", model_error_fields=("rate",), metavar="R", widget_text="none",
                  pane="batching", group="serving",
                  help="serving: arrival rate, requests/s (the operating point, and the devices that carry it)"),
    ScenarioInput(name="arrivals", label="arrivals", kind="dtype", default="closed", flag="--arrivals",
                  file_key="arrivals", choices=ARRIVAL_MODELS, model_error_fields=("arrivals",), metavar="MODEL",
                  model_field="ServingOptions.arrivals", pane="batching", group="serving",
                  help="serving: how requests arrive at a concurrency: closed (that many in flight, as vllm bench "
                  "serve --max-concurrency) or poisson (an open loop at the rate keeping that many in flight on "
                  "average; a rate is always Poisson)"),
    # targets: 0.001 ms is below any decode step (a kernel launch alone takes microseconds), so a smaller target
    # is a unit slip; 1e7 ms (2.8 hours) is past any latency anyone targets
    ScenarioInput(name="itl_target_ms", label="ITL target ms", kind="float", unit="ms", default=50.0, low=0.001,
                  high=10_000_000.0, flag="--itl-ms", file_key="itl_target_ms", metavar="MS", pane="batching",
                  group="serving", help="serving: target inter-token latency, ms"),
    ScenarioInput(name="ttft_target_ms", label="TTFT target ms", kind="float", unit="ms", default=1000.0, low=0.001,
                  high=10_000_000.0, flag="--ttft-ms", file_key="ttft_target_ms", metavar="MS", pane="batching",
                  group="serving", help="serving: target time to first token, ms"),
    ScenarioInput(name="prefix_tokens", label="prefix tokens", kind="int", unit="tokens", default=0, low=0,
                  high=10_000_000, flag="--prefix-tokens", file_key="prefix_tokens",
                  model_error_fields=("prefix_tokens",), metavar="S", model_field="ServingMix.prefix_tokens",
                  pane="batching", group="serving", help="serving: shared prompt prefix, tokens (prefix cache)"),
    ScenarioInput(name="prefix_hit_rate", label="prefix hit", kind="float", default=0.0, low=0.0, high=1.0,
                  flag="--prefix-hit", file_key="prefix_hit_rate", model_error_fields=("prefix_hit_rate",),
                  metavar="H", model_field="ServingMix.prefix_hit_rate", pane="batching", group="serving",
                  help="serving: share of requests whose prefix is cached"),
    # 0 is off (the default, and what a saved scenario without speculation holds); 64 drafted tokens is past any
    # published MTP or draft-model setting
    ScenarioInput(name="spec_tokens", label="spec tokens", kind="int", unit="tokens", default=0, low=0, high=64,
                  flag="--spec-tokens", file_key="spec_tokens", model_error_fields=("spec_tokens",), metavar="K",
                  pane="batching", group="serving",
                  help="serving: speculative tokens per step, drafted by one MTP layer of the target (0: off)"),
    # 0.7: an illustrative acceptance rate, not a measured one (it depends on the draft, the model and the text)
    ScenarioInput(name="spec_acceptance", label="acceptance", kind="float", default=0.7, low=0.0, high=1.0,
                  flag="--accept", file_key="spec_acceptance", model_error_fields=("accept",), metavar="A",
                  pane="batching", group="serving",
                  help="serving: probability that a drafted token is accepted"),
)

BY_NAME: dict[str, ScenarioInput] = {i.name: i for i in INPUTS}
BY_FILE_KEY: dict[str, ScenarioInput] = {i.file_key: i for i in INPUTS if i.file_key}
NUMBER_INPUTS = tuple(i for i in INPUTS if i.kind in ("int", "float"))
# the serving mode's inputs (a static batch ignores them)
SERVING_INPUTS = tuple(i.name for i in INPUTS if i.group == "serving")
# a choice that may be empty (None in the form: the model's released format, the preset's topology) shows this value
# in its select, and these are those choices
EMPTY_CHOICE = "auto"
EMPTY_CHOICE_INPUTS = tuple(i.name for i in INPUTS if i.kind == "dtype" and i.default is None)
# the form's fields: every input but the view settings (shown_context is kept beside the form, never saved)
FORM_FIELDS = tuple(i.name for i in INPUTS if i.group != "view")
# everything a scenario file or a deck's [slides.scenario] may hold, with its TOML type
FILE_KEY_TYPES: dict[str, type] = {i.file_key: i.file_type for i in INPUTS if i.file_key}
# ModelInputError.field -> the input to mark (and the flag to blame)
_MODEL_ERROR_TO_INPUT = {field: i.name for i in INPUTS for field in i.model_error_fields}
# widget ids that are not scenario inputs but still get labels and status messages
_EXTRA_LABELS = {"config_path": "config.json"}


def inputs_for_pane(pane: str) -> tuple[ScenarioInput, ...]:
    """The inputs a pane shows (``hardware``, ``workload``, ``batching``), in screen order."""
    if pane not in PANES:
        raise KeyError(f"unknown pane {pane!r} (known: {', '.join(PANES)})")
    return tuple(i for i in INPUTS if i.pane == pane)


def inputs_in_group(group: str) -> tuple[ScenarioInput, ...]:
    """The inputs of a group (``serving``, ``overrides``, ...), in registry order."""
    if group not in GROUPS:
        raise KeyError(f"unknown group {group!r} (known: {', '.join(GROUPS)})")
    return tuple(i for i in INPUTS if i.group == group)


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
