#!/usr/bin/env bash
# Rebuilds tests/backends/amdgpu/fixtures/: real AMDGPU code objects, and clang offload
# bundles (plain and compressed) written around them. The tests read only the committed
# outputs; this script documents how they were made and needs network access to PyPI.
#
# Compiler: the clang and lld that the `ziglang` wheel bundles (clang 22 with the amdgcn
# target; there is no system clang here). clang's HIP device link runs `lld -flavor gnu`,
# so a two-line wrapper forwards it to `zig ld.lld`. The bundles are written by the Python
# below from the documented layout, because zig ships no clang-offload-bundler.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
FIX=$ROOT/tests/backends/amdgpu/fixtures
SRC=$FIX/src
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install -q "ziglang==0.17.1" "zstandard==0.25.0"
PY=$WORK/venv/bin/python
mkdir "$WORK/bin"
cat > "$WORK/bin/lld" <<WRAP
#!/bin/sh
[ "\$1" = "-flavor" ] && shift 2
exec "$PY" -m ziglang ld.lld "\$@"
WRAP
chmod +x "$WORK/bin/lld"
export PATH="$WORK/bin:$PATH"
clang() { "$PY" -m ziglang clang "$@"; }
cd "$WORK"  # clang writes its temporaries next to the output

# HIP-style kernels, code object v5 (clang's default) for gfx90a and v4 for gfx1030.
clang -x hip --offload-arch=gfx90a -nogpulib -nogpuinc --cuda-device-only --no-gpu-bundle-output \
      -O2 -c "$SRC/kernels.hip" -o "$FIX/hip_gfx90a.co"
clang -x hip --offload-arch=gfx1030 -mcode-object-version=4 -nogpulib -nogpuinc --cuda-device-only \
      --no-gpu-bundle-output -O2 -c "$SRC/kernels.hip" -o "$FIX/hip_gfx1030_v4.co"
# A generic target (code object v6): its name has dashes of its own.
clang -x hip --offload-arch=gfx10-3-generic -mcode-object-version=6 -nogpulib -nogpuinc --cuda-device-only \
      --no-gpu-bundle-output -O2 -c "$SRC/kernels.hip" -o "$WORK/generic.co"
# OpenCL C, compiled then linked by hand (no OpenCL headers: -cl-no-stdinc).
clang -target amdgcn-amd-amdhsa -mcpu=gfx1030 -nogpulib -x cl -cl-std=CL2.0 -cl-no-stdinc \
      -cl-kernel-arg-info -O2 -c "$SRC/kernels.cl" -o "$WORK/ocl.o"
"$PY" -m ziglang ld.lld -shared -o "$FIX/ocl_gfx1030.co" "$WORK/ocl.o"

"$PY" - "$FIX" <<'PYEOF'
import hashlib, struct, sys, zlib
from pathlib import Path

import zstandard

fix = Path(sys.argv[1])
MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"

def bundle(entries, align):
    """Plain bundle: magic, u64 count, per entry (u64 offset, u64 size, u64 id length, id),
    then each entry's bytes at an offset aligned to `align` (clang's HIP driver uses 4096)."""
    header = len(MAGIC) + 8 + sum(24 + len(tid) for tid, _ in entries)
    offsets, pos = [], header
    for _, data in entries:
        pos = -(-pos // align) * align
        offsets.append(pos)
        pos += len(data)
    out = bytearray(MAGIC + struct.pack("<Q", len(entries)))
    for (tid, data), off in zip(entries, offsets):
        out += struct.pack("<QQQ", off, len(data), len(tid)) + tid
    for (_, data), off in zip(entries, offsets):
        out += b"\0" * (off - len(out)) + data
    return bytes(out)

def ccob(plain, version, method):
    """Compressed bundle ("CCOB"): u16 version, u16 method (0 zlib, 1 zstd), then v2: u32 file
    size, u32 raw size; v3: u64 file size, u64 raw size; then the low 64 bits of the raw
    bundle's MD5 (little-endian), then the compressed stream."""
    body = zlib.compress(plain, 9) if method == 0 else zstandard.ZstdCompressor(level=19).compress(plain)
    digest = struct.unpack_from("<Q", hashlib.md5(plain).digest())[0]
    sizes = "<II" if version == 2 else "<QQ"
    head = 4 + 4 + struct.calcsize(sizes) + 8
    return (b"CCOB" + struct.pack("<HH", version, method) + struct.pack(sizes, head + len(body), len(plain))
            + struct.pack("<Q", digest) + body)

gfx90a = (fix / "hip_gfx90a.co").read_bytes()
gfx1030 = (fix / "hip_gfx1030_v4.co").read_bytes()
generic = Path("generic.co").read_bytes()
host = (b"host-x86_64-unknown-linux-gnu-", b"")
plain = bundle([host, (b"hipv4-amdgcn-amd-amdhsa--gfx90a", gfx90a)], 4096)
(fix / "hip_gfx90a.hipfb").write_bytes(plain)
multi = bundle([host, (b"hipv4-amdgcn-amd-amdhsa--gfx1030", gfx1030),
                (b"hipv4-amdgcn-amd-amdhsa--gfx90a", gfx90a),
                (b"hipv4-amdgcn-amd-amdhsa--gfx10-3-generic", generic)], 4096)
(fix / "hip_multi_zlib.hipfb").write_bytes(ccob(multi, 2, 0))
(fix / "hip_multi_zstd.hipfb").write_bytes(ccob(multi, 3, 1))
PYEOF
chmod 644 "$FIX"/*.co "$FIX"/*.hipfb
ls -l "$FIX"
