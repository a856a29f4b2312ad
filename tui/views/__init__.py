"""What the explorer, the slides, the handout and ``roofline report`` show, as plain data and text.

Written once, read by all of them. No Textual here (plotext figures only where a chart is drawn as text)."""
