"""Every kind of data an archive can hold, registered in one place.

PRIVACY.md lists the same kinds; a test fails when the two disagree. ``content`` kinds
are bytes the program computed or read: they are written only in content mode, and a
capture stage asks ``ctx.content_allowed(kind)`` before writing one. ``metadata`` kinds
are written in both modes.
"""
from __future__ import annotations

import attrs

CONTENT, METADATA = "content", "metadata"


@attrs.frozen
class DataKind:
    name: str
    tier: str          # CONTENT or METADATA
    what: str
    when: str


DATA_KINDS: tuple[DataKind, ...] = (
    DataKind("call_sequence", METADATA,
             "API names, global sequence numbers, thread ids, returned errors",
             "every recorded HIP call"),
    DataKind("sizes_and_flags", METADATA,
             "byte counts, flags, enum values, launch shapes, device ids, CU masks, memory-pool "
             "properties and attribute values",
             "every call that takes them"),
    DataKind("addresses_and_handles", METADATA,
             "the process's device and host addresses and handle values",
             "every call that takes or returns them"),
    DataKind("kernel_names", METADATA, "kernel function names", "hipModuleGetFunction"),
    DataKind("kernel_layouts", METADATA, "each kernel parameter's offset, size and kind",
             "hipModuleGetFunction"),
    DataKind("kernel_arguments", METADATA,
             "the kernarg bytes of each launch (scalars and pointers passed by value)",
             "every kernel launch (replay cannot run the kernel without them)"),
    DataKind("code_objects", METADATA,
             "the code object images given to hipModuleLoadData; for a program compiled with hiprtc on "
             "the sim or cuda backend, that is its HIP C++ source, headers and options (a kernel source "
             "code object, which replay compiles), also in a metadata-only archive",
             "hipModuleLoadData (stored once by hash)"),
    DataKind("host_function_addresses", METADATA,
             "the address of an application host function and its userData pointer",
             "hipLaunchHostFunc"),
    DataKind("rtc_metadata", METADATA,
             "hiprtc program and input names, include names, name expressions, link file paths, "
             "compile and link options, and the size and xxh3-128 digest of each source, header, "
             "link input and compiler output", "every hiprtc call"),
    DataKind("manifest", METADATA,
             "format version, backend, plugins and versions, content mode, counts, "
             "unreplayable APIs with reasons", "capture start and close"),
    DataKind("h2d_payload", CONTENT, "the host bytes a host-to-device copy sent",
             "hipMemcpy* whose source is host memory; a hipBLAS scalar (alpha, beta) in host memory"),
    DataKind("d2h_result", CONTENT, "the bytes a device-to-host copy delivered",
             "hipMemcpy* whose destination is host memory (async: at the stream's sync); a hipBLAS "
             "result (dot, nrm2, asum, iamax, iamin) written to host memory"),
    DataKind("registered_memory", CONTENT,
             "the contents of application memory when hipHostRegister pinned it",
             "hipHostRegister"),
    DataKind("pinned_snapshot", CONTENT,
             "chunks of pinned host allocations a kernel reads directly",
             "kernel launches pointing into pinned memory (pinned_snapshot plugin)"),
    DataKind("graph_launch_snapshot", CONTENT,
             "chunks of pinned allocations that a graph's kernels point into",
             "hipGraphLaunch (graph_capture with pinned_snapshot)"),
    DataKind("kernel_source", CONTENT,
             "the text of hiprtc program sources and headers, of link inputs the program passed "
             "(bitcode, IR) and of the program logs the compiler wrote",
             "hiprtcCreateProgram, hiprtcLinkAddData, hiprtcGetProgramLog"),
)

KINDS_BY_NAME = {k.name: k for k in DATA_KINDS}
CONTENT_KINDS = tuple(k.name for k in DATA_KINDS if k.tier == CONTENT)
