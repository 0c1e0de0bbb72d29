"""MTL Explorer: see, teach and debug classical multi-task learning."""

__version__ = "0.1.0"
