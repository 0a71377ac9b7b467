"""The PEP 517 backend of ../../_build, building this directory's distribution instead."""
from __future__ import annotations

import importlib.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "_hrr_test_wheel_backend", os.path.join(_HERE, os.pardir, os.pardir, "_build", "wheel_backend.py"))
_backend = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_backend)
_backend.ROOT = os.path.dirname(_HERE)   # its functions read ROOT when called

get_requires_for_build_wheel = _backend.get_requires_for_build_wheel
prepare_metadata_for_build_wheel = _backend.prepare_metadata_for_build_wheel
build_wheel = _backend.build_wheel
