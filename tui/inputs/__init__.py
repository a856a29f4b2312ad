"""Scenario inputs: one registry of every input (label, unit, range, default, flag, file key), the form the
explorer edits and the one builder that turns it into a model :class:`Scenario`. No Textual here."""
