"""The explorer: its screen (form, ceilings, baseline, compare list), input panes and view widgets."""
