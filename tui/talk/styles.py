"""Talk mode's styles (the talk screens' ``CSS``): kept in Python so that they install with the package."""

TALK_CSS = """
/* Talk mode: readable from the back of a room (tui/talk/screen.py, tui/talk/presenter.py). */
#too-small {
    display: none;
    width: 1fr;
    height: 1fr;
    content-align: center middle;
    text-style: bold;
    color: $text-warning;
}

PresentScreen.-too-small #too-small, PresenterScreen.-too-small #too-small {
    display: block;
}

PresentScreen.-too-small #slide, PresenterScreen.-too-small #presenter {
    display: none;
}

#slide {
    padding: 0 2;
    height: 1fr;
}

#slide-title {
    text-style: bold;
    color: $text-primary;
    height: auto;
    margin-top: 1;
}

#slide-rule {
    height: 1;
    color: $primary;
}

#slide-lines {
    height: auto;
    margin-bottom: 1;
}

#slide-numbers {
    height: auto;
}

/* A slide without a view: the numbers take the middle of the stage. */
PresentScreen.-no-view #slide-numbers {
    height: 1fr;
    align: center middle;
}

.slide-number {
    width: 1fr;
    max-width: 48;
    height: auto;
    border: round $primary;
    padding: 0 1;
    margin-right: 1;
}

.number-label {
    color: $text-muted;
}

.number-value {
    text-style: bold;
    color: $text-accent;
}

/* 80x24 to 99x29: one row per number (label and value), the chart keeps the rest. */
PresentScreen.-compact #slide-title {
    margin-top: 0;
}

PresentScreen.-compact #slide-lines {
    margin-bottom: 0;
}

PresentScreen.-compact .slide-number {
    border: none;
    padding: 0;
}

#slide-view {
    height: 1fr;
    min-height: 8;
}

#slide-view-text {
    height: auto;
}

#slide-help {
    display: none;
    height: auto;
    border: round $secondary;
    padding: 0 1;
}

PresentScreen.-help #slide-help {
    display: block;
}

PresentScreen.-help .slide-chart, PresentScreen.-help #slide-view-text {
    display: none;
}

#slide-notes {
    display: none;
    height: auto;
    max-height: 6;
    color: $text-secondary;
    border-top: solid $secondary;
}

PresentScreen.-notes #slide-notes {
    display: block;
}

#slide-footer {
    height: 1;
    color: $text-muted;
}

/* The presenter's screen: where we are, the notes, what comes next, the time. */
#presenter {
    padding: 0 2;
}

#presenter-clock {
    height: auto;
    margin-top: 1;
}

.clock-box {
    width: 1fr;
    height: auto;
    border: round $primary;
    padding: 0 1;
}

#presenter-now {
    text-style: bold;
    color: $text-primary;
    height: auto;
    margin-top: 1;
}

#presenter-notes {
    height: 1fr;
    border: round $secondary;
    padding: 0 1;
}

#presenter-next {
    height: auto;
    color: $text-muted;
}

#presenter-footer {
    height: 1;
    color: $text-muted;
}
"""
