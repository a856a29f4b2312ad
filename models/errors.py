"""Errors the model raises for inputs it cannot evaluate; callers turn them into one-line messages."""


class ModelInputError(ValueError):
    """A scenario or architecture value the model cannot work with.

    ``field`` names the offending input (a config key, a flag-like name) so the edge can
    report "what is wrong and where".
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message
