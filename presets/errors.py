"""What is wrong with a user file, and where (file, line, key): the one error shape every reader raises."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class PresetError:
    """What is wrong with one preset file, and where."""

    path: str
    line: int | None
    key: str | None
    message: str

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.key}: {self.message}" if self.key else f"{where}: {self.message}"


class PresetFileError(ValueError):
    def __init__(self, error: PresetError) -> None:
        super().__init__(str(error))
        self.error = error
