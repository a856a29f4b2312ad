"""Talk mode: the presentation screen over the explorer, and deck handling."""
