"""A plugin module whose own import fails."""
import hrr_brokenplugins_dependency_not_installed  # noqa: F401


class Plugin:
    pass
