"""A small "inference serving step" written for hip-python.

Each step takes a batch of token ids and per-request state from pinned host buffers
(written with numpy, read by the kernels directly: no copy), computes hidden = tokens +
state and a score = sum(hidden), and copies the score back. The first step runs
eagerly; the step is then captured as a graph and launched several times over new
pinned inputs. A second stream waits on the first through an event and computes a
checksum of the hidden state. Exits non-zero if any result is wrong.

Under ``hrr run`` / ``hrr capture``, ``from hip import hip, hiprtc`` resolves to the
chosen backend; the kernels are compiled from the CUDA C below with hiprtc, so the same
app runs on the sim (which maps them to its built-in library), on NVIDIA and on AMD.
"""
import ctypes
import sys

import numpy as np
from hip import hip, hiprtc

SOURCE = rb"""
struct Slice { const unsigned int* src; unsigned int n; unsigned int pad; };

extern "C" __global__ void add_u32(unsigned int* dst, const unsigned int* a,
                                   const unsigned int* b, unsigned int n) {
  for (unsigned int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += gridDim.x * blockDim.x)
    dst[i] = a[i] + b[i];
}

extern "C" __global__ void sum_u32(unsigned int* dst, const unsigned int* src, unsigned int n) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {  // written once, whatever the launch shape
    unsigned int s = 0;
    for (unsigned int i = 0; i < n; ++i) s += src[i];
    dst[0] = s;
  }
}

extern "C" __global__ void struct_sum_u32(unsigned int* dst, Slice s) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    unsigned int t = 0;
    for (unsigned int i = 0; i < s.n; ++i) t += s.src[i];
    dst[0] = t;
  }
}
"""

BATCH = 256          # tokens per step
BLOCK = 128


class Slice(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("n", ctypes.c_uint32), ("pad", ctypes.c_uint32)]


def check(result):
    """hip-python returns (err, *outputs): raise on error, return the outputs."""
    err, *outputs = result
    if err != 0:
        raise RuntimeError(f"{err!r}")
    return outputs[0] if len(outputs) == 1 else outputs


def compile_kernels():
    props = check(hip.hipGetDeviceProperties(0))
    prog = check(hiprtc.hiprtcCreateProgram(SOURCE, b"serving.cu", 0, [], []))
    arch = props.gcnArchName if isinstance(props.gcnArchName, bytes) else str(props.gcnArchName).encode()
    err, = hiprtc.hiprtcCompileProgram(prog, 1, [b"--offload-arch=" + arch])
    if err != 0:
        log = bytearray(check(hiprtc.hiprtcGetProgramLogSize(prog)))
        hiprtc.hiprtcGetProgramLog(prog, log)
        raise RuntimeError(f"hiprtc: {err!r}: {log.decode(errors='replace')}")
    code = bytearray(check(hiprtc.hiprtcGetCodeSize(prog)))
    check(hiprtc.hiprtcGetCode(prog, code))
    check(hiprtc.hiprtcDestroyProgram(prog))
    module = check(hip.hipModuleLoadData(code))
    return module, {name: check(hip.hipModuleGetFunction(module, name.encode()))
                    for name in ("add_u32", "sum_u32", "struct_sum_u32")}


def pinned_u32(count):
    ptr = check(hip.hipHostMalloc(count * 4, hip.hipHostMallocDefault))
    return ptr, np.ctypeslib.as_array((ctypes.c_uint32 * count).from_address(int(ptr)))


def main() -> int:
    check(hip.hipInit(0))
    module, k = compile_kernels()
    tokens_p, tokens = pinned_u32(BATCH)      # token ids: pinned, written by numpy
    state_p, state = pinned_u32(BATCH)        # per-request state: pinned
    score_p, score = pinned_u32(1)            # results land here
    check_p, checksum = pinned_u32(1)
    hidden = check(hip.hipMalloc(BATCH * 4))
    score_d = check(hip.hipMalloc(4))
    compute = check(hip.hipStreamCreate())
    post = check(hip.hipStreamCreateWithFlags(hip.hipStreamNonBlocking))
    done = check(hip.hipEventCreate())

    # Arguments: kernelParams are addresses of the values (pointers as c_void_p).
    args = [ctypes.c_void_p(int(hidden)), ctypes.c_void_p(int(tokens_p)),
            ctypes.c_void_p(int(state_p)), ctypes.c_uint32(BATCH)]
    add_params = [ctypes.addressof(a) for a in args]
    sum_args = [ctypes.c_void_p(int(score_d)), ctypes.c_void_p(int(hidden)), ctypes.c_uint32(BATCH)]
    sum_params = [ctypes.addressof(a) for a in sum_args]
    grid = (BATCH + BLOCK - 1) // BLOCK

    def enqueue_step(stream):
        check(hip.hipModuleLaunchKernel(k["add_u32"], grid, 1, 1, BLOCK, 1, 1, 0, stream,
                                        add_params, None))
        check(hip.hipModuleLaunchKernel(k["sum_u32"], 1, 1, 1, BLOCK, 1, 1, 0, stream,
                                        sum_params, None))

    def post_process():
        # The post stream waits for the compute stream's step, then reads the results.
        check(hip.hipEventRecord(done, compute))
        check(hip.hipStreamWaitEvent(post, done, 0))
        check(hip.hipMemcpyAsync(score_p, score_d, 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost, post))
        check(hip.hipModuleLaunchKernel(k["struct_sum_u32"], 1, 1, 1, 64, 1, 1, 0, post, None,
                                        (check_p, Slice(int(hidden), BATCH, 0))))
        check(hip.hipStreamSynchronize(post))

    def verify(step, expect):
        ok = int(score[0]) == expect and int(checksum[0]) == expect
        print(f"step {step}: score={int(score[0])} checksum={int(checksum[0])} "
              f"expected={expect} {'ok' if ok else 'WRONG'}")
        return ok

    rng = np.random.default_rng(7)
    all_ok = True

    # Step 0: eager launches; the kernels read the pinned inputs directly.
    tokens[:] = rng.integers(0, 50_000, BATCH, dtype=np.uint32)
    state[:] = np.arange(BATCH, dtype=np.uint32)
    enqueue_step(compute)
    post_process()
    all_ok &= verify(0, int((tokens.astype(np.uint64) + state).sum()) % 2**32)

    # Steps 1..3: the same step as a captured graph, launched over new pinned inputs.
    check(hip.hipStreamBeginCapture(compute, hip.hipStreamCaptureMode.hipStreamCaptureModeGlobal))
    enqueue_step(compute)
    graph = check(hip.hipStreamEndCapture(compute))
    graph_exec, _node, _log = check(hip.hipGraphInstantiate(graph, 0))
    for step in range(1, 4):
        tokens[:] = rng.integers(0, 50_000, BATCH, dtype=np.uint32)
        state[:] += np.uint32(step)
        check(hip.hipGraphLaunch(graph_exec, compute))
        post_process()
        all_ok &= verify(step, int((tokens.astype(np.uint64) + state).sum()) % 2**32)

    host_hidden = np.zeros(BATCH, np.uint32)
    check(hip.hipMemcpy(host_hidden, hidden, BATCH * 4, hip.hipMemcpyKind.hipMemcpyDeviceToHost))
    all_ok &= bool((host_hidden == tokens + state).all())

    for obj, free in ((graph_exec, hip.hipGraphExecDestroy), (graph, hip.hipGraphDestroy),
                      (done, hip.hipEventDestroy), (compute, hip.hipStreamDestroy),
                      (post, hip.hipStreamDestroy), (hidden, hip.hipFree), (score_d, hip.hipFree),
                      (tokens_p, hip.hipHostFree), (state_p, hip.hipHostFree),
                      (score_p, hip.hipHostFree), (check_p, hip.hipHostFree),
                      (module, hip.hipModuleUnload)):
        check(free(obj))
    print("serving step:", "all results correct" if all_ok else "WRONG RESULTS")
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
