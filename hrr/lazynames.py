"""A package's public names imported at their first use (PEP 562), so that importing the
package, or one light submodule of it, does not load the heavy ones."""
from __future__ import annotations

import importlib
from typing import Any, Callable


def lazy_names(namespace: dict[str, Any], where: dict[str, tuple[str, ...]]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for the package whose ``globals()`` is ``namespace``:
    each name of ``where`` (module → names) comes from its module at first use, then stays.
    No name may be a submodule's too: importing a submodule binds its name in the package."""
    module_of = {name: module for module, names in where.items() for name in names}
    package = namespace["__name__"]

    def __getattr__(name: str) -> Any:
        module = module_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(module_of))

    return __getattr__, __dir__


__all__ = ["lazy_names"]
