"""Big titles for the stage: a 3x5 pixel font drawn with half blocks, 3 rows high and 4 columns a character.

The glyphs are this project's own table (upper case, digits, the punctuation titles use); lower case is drawn as
upper case and a character without a glyph as a blank. No Textual here: the slide widget asks for lines.
"""

from __future__ import annotations

GLYPH_COLUMNS = 3
CHAR_COLUMNS = GLYPH_COLUMNS + 1  # one blank column between characters
ROWS = 3  # five pixel rows, two per text row (the last half row is blank)

_FONT_ROWS = {
    "A": ".#.|#.#|###|#.#|#.#", "B": "##.|#.#|##.|#.#|##.", "C": ".##|#..|#..|#..|.##", "D": "##.|#.#|#.#|#.#|##.",
    "E": "###|#..|##.|#..|###", "F": "###|#..|##.|#..|#..", "G": ".##|#..|#.#|#.#|.##", "H": "#.#|#.#|###|#.#|#.#",
    "I": "###|.#.|.#.|.#.|###", "J": "..#|..#|..#|#.#|.#.", "K": "#.#|#.#|##.|#.#|#.#", "L": "#..|#..|#..|#..|###",
    "M": "#.#|###|###|#.#|#.#", "N": "##.|#.#|#.#|#.#|#.#", "O": ".#.|#.#|#.#|#.#|.#.", "P": "##.|#.#|##.|#..|#..",
    "Q": ".#.|#.#|#.#|##.|.##", "R": "##.|#.#|##.|#.#|#.#", "S": ".##|#..|.#.|..#|##.", "T": "###|.#.|.#.|.#.|.#.",
    "U": "#.#|#.#|#.#|#.#|###", "V": "#.#|#.#|#.#|#.#|.#.", "W": "#.#|#.#|###|###|#.#", "X": "#.#|#.#|.#.|#.#|#.#",
    "Y": "#.#|#.#|.#.|.#.|.#.", "Z": "###|..#|.#.|#..|###",
    "0": "###|#.#|#.#|#.#|###", "1": ".#.|##.|.#.|.#.|###", "2": "##.|..#|.#.|#..|###", "3": "##.|..#|.#.|..#|##.",
    "4": "#.#|#.#|###|..#|..#", "5": "###|#..|##.|..#|##.", "6": ".##|#..|###|#.#|###", "7": "###|..#|.#.|.#.|.#.",
    "8": "###|#.#|###|#.#|###", "9": "###|#.#|###|..#|##.",
    " ": "...|...|...|...|...", ".": "...|...|...|...|.#.", ",": "...|...|...|.#.|#..", ":": "...|.#.|...|.#.|...",
    "-": "...|...|###|...|...", "+": "...|.#.|###|.#.|...", "/": "..#|..#|.#.|#..|#..", "'": ".#.|.#.|...|...|...",
    "!": ".#.|.#.|.#.|...|.#.", "?": "##.|..#|.#.|...|.#.", "(": "..#|.#.|.#.|.#.|..#", ")": "#..|.#.|.#.|.#.|#..",
    "%": "#.#|..#|.#.|#..|#.#", "=": "...|###|...|###|...", "&": ".#.|#.#|.#.|#.#|.##", '"': "#.#|#.#|...|...|...",
}
_HALF = {(False, False): " ", (True, False): "\u2580", (False, True): "\u2584", (True, True): "\u2588"}


def _glyph(char: str) -> list[str]:
    """Three text rows of one character (pixel rows 1+2, 3+4, 5+blank)."""
    rows = _FONT_ROWS.get(char.upper(), _FONT_ROWS[" "]).split("|") + ["..."]
    return ["".join(_HALF[(top[x] == "#", bottom[x] == "#")] for x in range(GLYPH_COLUMNS))
            for top, bottom in zip(rows[0::2], rows[1::2], strict=True)]


def big_line(text: str) -> list[str]:
    """One line of text as three rows of big characters (4 columns each, the last one's gap dropped)."""
    glyphs = [_glyph(char) for char in text]
    return ["".join(g[row] + " " for g in glyphs).rstrip() for row in range(ROWS)]


def wrap_words(text: str, width_chars: int) -> list[str] | None:
    """Words into lines of at most ``width_chars`` characters; None when one word is longer than that."""
    lines: list[str] = []
    for word in text.split():
        if len(word) > width_chars:
            return None
        if lines and len(lines[-1]) + 1 + len(word) <= width_chars:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def big_title(text: str, width_columns: int, max_lines: int) -> list[str] | None:
    """A title in big characters, wrapped at words into ``width_columns``, with a blank row between lines; None
    when it needs more than ``max_lines`` big lines (the caller then draws it as plain bold text)."""
    lines = wrap_words(text, (width_columns + 1) // CHAR_COLUMNS)
    if not lines or len(lines) > max_lines:
        return None
    rows: list[str] = []
    for number, line in enumerate(lines):
        if number:
            rows.append("")
        rows += big_line(line)
    return rows
