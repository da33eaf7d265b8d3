"""msagent's version, in a module of its own so that any layer can read it (a run's feed
records it) without importing the package's facade, which loads the runtime."""

__version__ = "0.1.0"
