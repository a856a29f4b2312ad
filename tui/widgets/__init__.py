"""Textual widgets that the explorer and talk mode share (the plot widget); neither room imports the other."""
