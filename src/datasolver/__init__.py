"""datasolver: a data agent that turns a folder of analysis tasks into one prediction.csv per task."""

__version__ = "0.1.0"
