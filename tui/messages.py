"""Every custom message, in one place: what the explorer's widgets tell its screen (a field changed or was refused,
Compare's list or sort changed) and what one screen tells the App (open the explorer on a slide, back to the
slides). Widgets and screens post these; none of them calls the screen or the App."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message
from textual.widget import Widget

from roofline.tui.inputs.form import ScenarioForm
from roofline.tui.views.state import Sort


# ---- between screens (handled by the App) -------------------------------------------------------------------------
@dataclass
class OpenExplorer(Message):
    """The slide screen's ``e``: show the explorer on this form."""

    form: ScenarioForm


class BackToSlides(Message):
    """The explorer's ``escape`` with no field to leave: back to the slides, when there are slides."""


# ---- the explorer's widgets to its screen ------------------------------------------------------------------------
@dataclass
class FormChanged(Message):
    """The inputs panel's field, select or checkbox changed these form fields (name -> value)."""

    values: dict


@dataclass
class FieldRefused(Message):
    """A field's text is not an acceptable value (``typed``), or a value the model refuses; the screen keeps the last
    good scenario and the status line says why."""

    field: str
    message: str
    typed: bool = False


@dataclass
class FieldAccepted(Message):
    """A field that was refused is acceptable again."""

    field: str


@dataclass
class CeilingChanged(Message):
    """The achievable-ceilings checkbox was ticked or cleared."""

    achievable: bool


@dataclass
class CompareChanged(Message):
    """Compare's device list changed (a device removed)."""

    compare_ids: tuple[str, ...]


@dataclass
class SortChanged(Message):
    """Compare's sort changed (a header click or ``s``); None: the list's own order."""

    sort: Sort | None


@dataclass
class ContextChanged(Message):
    """The context field: the decode step the views show (None: the mean over the generation)."""

    shown_context: int | None


@dataclass
class LivePoints(Message):
    """Live GPU counters: the running workload's recent (log10 FLOP/B, log10 FLOP/s) on the roofline, oldest first
    (empty when the counters stop)."""

    points: tuple[tuple[float, float], ...]


@dataclass
class ViewReady(Message):
    """A view's widget is in the DOM (views the first frame does not show are mounted just after it)."""

    view: str
    widget: Widget


@dataclass
class ViewShown(Message):
    """The results pane shows another view (the Serving view needs the serving numbers computed)."""

    view: str
