"""Replay of hipFFT and hipRAND calls on the sim: plans and generators are mapped, the
generated numbers and transforms come back byte for byte, a generate call's output is
bounds-checked by its ``n``, and a plan too large for its buffers faults instead of
reaching past an allocation."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from hrr.archive.format import EVENTS_FILE, join_events, split_events
from hrrtest import archive_calls, capture_libraries, only, replay, text


def rewrite(root: Path, api: str, change) -> None:
    """Edit the recorded arguments of every ``api`` record, with valid checksums."""
    (pid,) = Path(root).glob("pid-*")
    path = pid / EVENTS_FILE
    head, version, values, trailer = split_events(path.read_bytes())

    def edit(v: list) -> list:
        v = list(v)
        if v[2] == api:
            v[3] = change(list(v[3]))
        return v
    path.write_bytes(join_events(head, [edit(v) for v in values], trailer, version))


def _app(n: int = 32, seed: int = 5):
    def app(hip, libraries):
        fft, rand = libraries["hipfft"], libraries["hiprand"]
        d = hip.hipMalloc(n * 8)[1]
        gen = rand.hiprandCreateGenerator(rand.hiprandRngType.HIPRAND_RNG_PSEUDO_XORWOW)[1]
        assert rand.hiprandSetPseudoRandomGeneratorSeed(gen, seed)[0] == 0
        assert rand.hiprandSetGeneratorOffset(gen, 3)[0] == 0
        assert rand.hiprandGenerateNormalDouble(gen, d, n, 0.0, 1.0)[0] == 0
        noise = np.zeros(n, np.float64)
        hip.hipMemcpy(noise, d, noise.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        plan = fft.hipfftPlanMany(1, [n], None, 1, 0, None, 1, 0, fft.hipfftType_t.HIPFFT_D2Z, 1)[1]
        out = hip.hipMalloc((n // 2 + 1) * 16)[1]
        assert fft.hipfftExecD2Z(plan, d, out)[0] == 0
        spectrum = np.zeros(n // 2 + 1, np.complex128)
        hip.hipMemcpy(spectrum, out, spectrum.nbytes, hip.hipMemcpyKind.hipMemcpyDeviceToHost)
        fft.hipfftDestroy(plan)
        rand.hiprandDestroyGenerator(gen)
        return noise, spectrum
    return app


def test_generated_numbers_and_transforms_replay_byte_for_byte(tmp_path):
    noise, spectrum = capture_libraries(tmp_path, _app())
    np.testing.assert_allclose(spectrum, np.fft.rfft(noise), atol=1e-12)
    result = replay(tmp_path)
    proc = only(result)
    assert result.exit_code == 0 and proc.checks_passed == 2 and not proc.refusals, text(result)
    plan_many = [v for v in archive_calls(tmp_path) if v[2] == "hipfftPlanMany"]
    assert plan_many[0][3][1] == np.array([32], np.uint32).tobytes()  # n: rank words, packed


def test_a_different_seed_fails_the_check_of_the_numbers(tmp_path):
    capture_libraries(tmp_path, _app())
    rewrite(tmp_path, "hiprandSetPseudoRandomGeneratorSeed", lambda a: [a[0], 6])
    proc = only(replay(tmp_path))
    assert proc.checks_failed >= 1, proc


def test_an_output_past_its_allocation_is_refused_not_generated(tmp_path):
    capture_libraries(tmp_path, _app())
    rewrite(tmp_path, "hiprandGenerateNormalDouble", lambda a: a[:2] + [64] + a[3:])
    proc = only(replay(tmp_path))
    assert proc.count("bounds") == 1, proc


def test_a_plan_larger_than_its_buffers_fails_its_exec(tmp_path):
    capture_libraries(tmp_path, _app())
    rewrite(tmp_path, "hipfftPlanMany", lambda a: [a[0], np.array([4096], np.uint32).tobytes()] + a[2:])
    result = replay(tmp_path)
    assert result.exit_code != 0 and "hipErrorIllegalAddress" in text(result), text(result)


def test_a_library_status_that_differs_is_named_by_the_librarys_enum(tmp_path):
    """A Mersenne twister takes no offset: replay's status differs from the recording's, and
    the divergence names hipRAND's statuses, not hipError_t's of the same numbers."""
    capture_libraries(tmp_path, _app())
    rewrite(tmp_path, "hiprandCreateGenerator", lambda a: [403])   # HIPRAND_RNG_PSEUDO_MTGP32
    result = replay(tmp_path)
    (divergence,) = only(result).divergences
    assert (divergence.recorded_name, divergence.replayed_name) == \
        ("HIPRAND_STATUS_SUCCESS (0)", "HIPRAND_STATUS_TYPE_ERROR (103)")
    assert "the recording returned HIPRAND_STATUS_SUCCESS (0), replay returned HIPRAND_STATUS_TYPE_ERROR (103)" \
        in text(result), text(result)
