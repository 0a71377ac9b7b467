"""hrr: HIP Record & Replay for Python."""
from typing import TYPE_CHECKING

# The one version string is pyproject.toml's, read from the installed package's metadata.
# It is looked up on first use: importing importlib.metadata costs more than the rest of
# ``import hrr``, and a captured program imports hrr without needing the version.
__version__: str

UNKNOWN_VERSION = "0+unknown"


def package_version() -> str:
    """hrr's version from its distribution metadata ("0+unknown" when hrr is not installed)."""
    from importlib import metadata

    try:
        return metadata.version("hrr")
    except metadata.PackageNotFoundError:
        return UNKNOWN_VERSION


if not TYPE_CHECKING:
    def __getattr__(name: str) -> str:
        if name == "__version__":
            version = package_version()
            globals()["__version__"] = version
            return version
        raise AttributeError(f"module 'hrr' has no attribute {name!r}")
