"""Roles as objects: every role the catalogue uses has a class, and replay validates every
field of a record before acting on any of them."""
from __future__ import annotations

from hrr.api.catalogue import rows
from hrr.api.roles import OUT_ROLES, PARAM_ROLES
from hrr.archive import Limits, open_archive, open_process_writer
from hrr.backends import sim
from hrr.pipeline.manager import make_plugin_manager
from hrr.replay.engine import ProcessReplayer, ReplayOptions

PINNED, DEVICE = 0x7F00_0000_0000, 1 << 48
H2D, D2H = 1, 2


def test_every_catalogue_role_is_a_class():
    for row in rows():
        for p in row.params:
            assert PARAM_ROLES[p.role].name == p.role, (row.name, p.name)
        for o in row.outs:
            assert OUT_ROLES[o.role].name == o.role, (row.name, o.name)


def _replay(root, records, blobs) -> object:
    w = open_process_writer(str(root), 4242, {"backend": "sim"}, manifest={"content_mode": "content"})
    names = {key: w.put_blob(data) for key, data in blobs.items()}
    for seq, (api, args, outs) in enumerate(records):
        args = [[x if x not in names else names[x] for x in a] if isinstance(a, list) else a for a in args]
        w.append([seq, 1, api, args, 0, outs, {}])
    w.close()
    sim.reset_device()
    proc = open_archive(str(root), Limits()).processes[0]
    pm, _ = make_plugin_manager([])
    return ProcessReplayer(proc, sim, pm, Limits(), ReplayOptions(strict=True)).run()


def test_a_refused_record_restores_nothing_into_pinned_memory(tmp_path):
    """A copy from pinned memory whose last field is malformed: the source's recorded
    bytes were written into replay's pinned buffer before the malformed field was seen,
    so a later check of that buffer failed although the record was refused."""
    records = [
        ("hipHostMalloc", [64, 0], [PINNED]),
        ("hipMalloc", [64], [DEVICE]),
        ("hipMemcpy", [["a", DEVICE, 64, None], ["a", PINNED, 64, "ones"], 64, 99], []),  # 99: no hipMemcpyKind
        ("hipMemcpy", [["h", 0x1000, 64, "zeros"], ["a", PINNED, 64, None], 64, D2H], []),
    ]
    stats = _replay(tmp_path, records, {"ones": b"\x01" * 64, "zeros": bytes(64)})
    assert [(r.seq, r.category) for r in stats.refusals] == [(2, "bad_record")]
    assert (stats.checks_passed, stats.checks_failed) == (1, 0)
