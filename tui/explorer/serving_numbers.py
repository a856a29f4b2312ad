"""The serving numbers of the explorer's scenario, computed once per change of what they depend on (the form, the
results, the ceiling, the baseline), with the last good ones kept when a change cannot be computed."""

from __future__ import annotations

from dataclasses import dataclass, replace

from roofline.models.errors import ModelInputError
from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.results import Ceiling, ExplorerResults
from roofline.tui.views.serving_data import ServingMemo, ServingResults, serving_results, serving_settings


@dataclass(frozen=True, slots=True)
class ServingOutcome:
    results: ServingResults | None  # the last serving numbers that computed
    problem: str = ""  # why they are not the current ones
    refused: ModelInputError | None = None  # the model's complaint, to mark the field it names


class ServingNumbers:
    def __init__(self) -> None:
        self._memo = ServingMemo()
        self._key: tuple | None = None
        self._outcome = ServingOutcome(None)

    def update(self, form: ScenarioForm, results: ExplorerResults, ceiling: Ceiling,
               baseline: ExplorerResults | None) -> ServingOutcome:
        key = (form, results, ceiling, baseline)
        if self._key is not None and all(a is b for a, b in zip(key, self._key, strict=True)):
            return self._outcome
        self._key = key
        last = self._outcome.results
        try:
            settings = replace(serving_settings(form, results.scenario), in_use=form.serving)
            base = baseline.scenario if baseline is not None else None
            sr = serving_results(results.scenario, settings, ceiling.estimate_name, base, self._memo)
        except ModelInputError as err:
            self._outcome = ServingOutcome(last, f"{err.field}: {err.message}", err)
        except (ArithmeticError, ValueError) as err:
            self._outcome = ServingOutcome(last, f"could not compute the serving numbers ({err})")
        else:
            self._outcome = ServingOutcome(sr)
        return self._outcome
