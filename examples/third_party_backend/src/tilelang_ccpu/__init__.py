"""An example third-party TileLang backend (target kind ``ccpu``)."""

__version__ = "0.1.0"
