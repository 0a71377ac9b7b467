"""Helper processes hrr starts itself (a compiler, the kernel worker) are never recorded."""
from __future__ import annotations

from hrr import config


def test_untraced_env_drops_what_marks_a_recorded_process(monkeypatch):
    for name in config.TRACED_ENV:
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("PATH_KEPT_FOR_THE_TEST", "1")
    env = config.untraced_env({"OMP_NUM_THREADS": "1"})
    assert not set(config.TRACED_ENV) & set(env)
    assert env["PATH_KEPT_FOR_THE_TEST"] == "1" and env["OMP_NUM_THREADS"] == "1"
