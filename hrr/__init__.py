"""hrr: HIP Record & Replay for Python."""
# The one version string is hrr/_version.py's (pyproject.toml reads it from there at build):
# read as a module, not from the installed metadata, whose lookup (importlib.metadata
# scanning sys.path) cost tens of milliseconds in every process hrr starts.
from hrr._version import __version__

__all__ = ["__version__"]
