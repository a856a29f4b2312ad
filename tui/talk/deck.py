"""A deck's slides built into scenarios and results, and the text views a slide shows (no Textual here)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from roofline.models.errors import ModelInputError
from roofline.presets.deck_file import Deck, Slide
from roofline.presets.loader import PresetCatalog
from roofline.tui.inputs.file_values import file_key, form_from_file_values
from roofline.tui.inputs.form import FormError, ScenarioForm, build_scenario
from roofline.tui.views.registry import BY_ID
from roofline.tui.views.results import ExplorerResults, compute_results
from roofline.tui.views.slide_claims import slide_value
from roofline.tui.views.state import ExplorerState


class DeckError(ValueError):
    """A deck whose slide cannot be built: names the slide and the key."""


@dataclass(frozen=True, slots=True)
class BuiltSlide:
    slide: Slide
    form: ScenarioForm
    results: ExplorerResults


def build_slide(slide: Slide, catalog: PresetCatalog) -> BuiltSlide:
    try:
        form = form_from_file_values(slide.scenario)
        results = compute_results(build_scenario(form, catalog))
    except FormError as err:
        raise DeckError(f"slide {slide.index}: scenario.{file_key(err.field)}: {err.message}") from None
    for hw_id in slide.compare:
        if hw_id not in catalog.hardware:
            raise DeckError(f"slide {slide.index}: compare: unknown hardware {hw_id!r}")
    return BuiltSlide(slide, form, results)


def check_deck(deck: Deck, catalog: PresetCatalog) -> list[BuiltSlide]:
    """Every slide built once, up front: a broken deck fails before the screen opens."""
    return [build_slide(slide, catalog) for slide in deck.slides]


def slide_state(built: BuiltSlide, catalog: PresetCatalog) -> ExplorerState:
    """What a slide's view draws from: its scenario under the spec ceilings, its compare list."""
    return ExplorerState(form=built.form, results=built.results, catalog=catalog,
                         compare_ids=tuple(built.slide.compare))


def slide_view_text(built: BuiltSlide, catalog: PresetCatalog) -> list[str]:
    """The lines a view shows on a slide as text (ops, compare) or under its chart (the history callout); empty for
    chart-only views (the view registry says which)."""
    view = BY_ID.get(built.slide.view)
    if view is None or view.slide_text is None:
        return []
    return view.slide_text(slide_state(built, catalog), built.slide)


def slide_numbers(built: BuiltSlide, catalog: PresetCatalog) -> list[tuple[str, str]]:
    """(label, value) of each number the slide names, from its (possibly knob-turned) scenario."""
    from roofline.tui.views.slide_serving import SERVING_LABELS, serving_value

    return [serving_value(name, built.form, built.results) if name in SERVING_LABELS
            else slide_value(name, built.results, catalog) for name in built.slide.numbers]


def rebuild_slide(built: BuiltSlide, form: ScenarioForm, catalog: PresetCatalog) -> BuiltSlide:
    """The slide on another form (a live knob turned); :class:`DeckError` when the model cannot take it."""
    try:
        results = compute_results(build_scenario(form, catalog))
    except FormError as err:
        raise DeckError(f"{file_key(err.field)}: {err.message}") from None
    except ModelInputError as err:
        raise DeckError(str(err)) from None
    return BuiltSlide(built.slide, form, results)


def turned(form: ScenarioForm, knob: str, factor: float) -> ScenarioForm:
    """The form with the batch or the prompt scaled (the explorer's + - ] [), within the inputs' limits."""
    return form.scaled("batch" if knob == "batch" else "prompt_tokens", factor)


# the devices `d` / `D` step through on a slide without a compare list of its own
DEVICE_TOUR = ("h100-sxm", "h200", "b200", "mi300x", "a100-sxm4-80gb", "l40s")


def next_device(form: ScenarioForm, slide_compare: tuple[str, ...], catalog: PresetCatalog, step: int) -> ScenarioForm:
    """The form on the next (or previous) device of the slide's compare list, else of :data:`DEVICE_TOUR`; the
    slide's own device is in the tour too, so stepping round comes back to it."""
    tour = [h for h in dict.fromkeys((*(slide_compare or DEVICE_TOUR), form.hardware_id)) if h in catalog.hardware]
    if len(tour) < 2:
        return form
    i = tour.index(form.hardware_id) if form.hardware_id in tour else -1
    return replace(form, hardware_id=tour[(i + step) % len(tour)])


def knob_summary(original: ScenarioForm, form: ScenarioForm) -> str:
    """What the live knobs changed, e.g. 'batch 64 -> 128'; '' when nothing."""
    parts = []
    if form.hardware_id != original.hardware_id:
        parts.append(f"device {original.hardware_id} -> {form.hardware_id}")
    if form.batch != original.batch:
        parts.append(f"batch {original.batch:,} -> {form.batch:,}")
    if form.prompt_tokens != original.prompt_tokens:
        parts.append(f"prompt {original.prompt_tokens:,} -> {form.prompt_tokens:,}")
    return ", ".join(parts)
