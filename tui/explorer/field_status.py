"""The fields' problems and the status line: which field is wrong, why, and what is still shown.

A field whose text is not an acceptable number stays marked until its text changes (``typed``); a value the model
refuses is cleared by the next scenario that builds. The latest problem is shown first. Messages quote what the
user typed, so the status line is plain text, never markup (``[/`` typed into a field once killed the explorer).
"""

from __future__ import annotations

from roofline.tui.inputs.registry import BY_NAME, label


class FieldProblems:
    """Bookkeeping of invalid fields (no widgets here): ``message`` is what the status line says."""

    def __init__(self) -> None:
        self.invalid: dict[str, str] = {}  # field -> its message, latest last
        self.typed: set[str] = set()  # fields whose text is not an acceptable number

    def mark(self, field: str, message: str, *, typed: bool, last_good) -> None:
        """Record a problem; ``last_good`` is the value still shown for a typed field (None: empty)."""
        name = label(field)
        if typed and field in BY_NAME:
            spec = BY_NAME[field]
            shown = (spec.empty_means or "none") if last_good is None else (
                f"{last_good:,}" if isinstance(last_good, int) else f"{last_good:,g}")
            suffix = f"showing {name} {shown}, the last good value"
        elif field == "config_path":
            suffix = "the model shown is unchanged"
        else:
            suffix = "showing the last good scenario"
        self.invalid.pop(field, None)  # re-inserted: the latest problem is shown first
        self.invalid[field] = f"{name}: {message} ({suffix})"
        if typed:
            self.typed.add(field)

    def clear(self, field: str) -> bool:
        """The field is acceptable again; True when it had a message."""
        self.typed.discard(field)
        return self.invalid.pop(field, None) is not None

    def settled_by_model(self) -> list[str]:
        """Fields the model had refused (not typed ones, not the config path): a good scenario settles them."""
        return [f for f in self.invalid if f not in self.typed and f != "config_path"]

    def message(self) -> str:
        """The latest problem and how many more, or ''."""
        if not self.invalid:
            return ""
        latest = next(reversed(self.invalid.values()))
        more = len(self.invalid) - 1
        return latest + (f"; {more} more field{'s' if more > 1 else ''} to fix" if more else "")


class StatusLines:
    """The status line over the views and its twin beside the inputs (narrow terminals), and the fields' invalid
    marks, kept with :class:`FieldProblems`."""

    def __init__(self, problems: FieldProblems, inputs, status) -> None:
        self.problems, self.inputs, self.status = problems, inputs, status

    def refuse(self, field: str, message: str, *, typed: bool, last_good) -> None:
        self.problems.mark(field, message, typed=typed, last_good=last_good)
        self.inputs.set_invalid(field, True)
        self.show()

    def accepted(self, field: str) -> None:
        if self.problems.clear(field):
            self.show()

    def settle(self, fields) -> None:
        """The model took values it had refused: their marks go."""
        for field in fields:
            self.inputs.set_invalid(field, False)
            self.problems.clear(field)
        self.show()

    def show(self, text: str | None = None) -> None:
        """``text``, else the latest field problem (and how many more), else nothing."""
        from roofline.tui.explorer.quiet_update import set_text

        text = text if text is not None else self.problems.message()
        set_text(self.status, text)
        set_text(self.inputs.status, text)
        self.inputs.status.set_class(not text, "-empty")  # no blank row above the inputs
