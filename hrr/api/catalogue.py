"""The HIP API catalogue: one declarative row per supported call.

Capture serialisation, replay dispatch, ``hrr info``, the coverage table in the docs
and the round-trip tests all derive from these rows. Adding an API is adding a row.

Parameter roles (``Param.role``):
  value      a scalar recorded as is
  enum       a hip-python enum member (``kind`` names the enum); recorded as its int
  ptr        an address, recorded raw and translated at replay through the allocation map
  handle     a stream/event/module/function/graph/graph_exec handle (``kind``)
  copy_dst   a copy destination: a tracked allocation (translated) or host memory
             (checked byte for byte at replay); ``size`` names the byte-count parameter
  copy_src   a copy source: a tracked allocation or host memory (its bytes are a blob)
  host_range app memory that hipHostRegister pins; ``size`` names the byte count
  strided    one end of a 2D copy (``kind`` ``src`` or ``dst``): ``rows`` names its (pitch,
             width, height) parameters; device memory is translated like ``ptr``, host
             memory records (``src``) or checks (``dst``) exactly the ``height`` rows of
             ``width`` bytes the copy touches, packed, never the gaps between them
  code       a code object image (stored once by hash)
  name       a kernel name (bytes or str)
  dim3       a hip.dim3
  host_fn    a host function address (application code: never replayable)
  user_data  an opaque pointer handed back to a host function
  launch     kernelParams / extra / args: normalised to kernarg bytes by capture
  ignored    not recorded (e.g. a log buffer size)
  result_buf app memory a query writes its answer into (``size`` or ``span`` bytes): not
             recorded; replay passes a zeroed buffer of its own, never checked
  source     hiprtc input text or image (a program's source, its headers, a link input;
             ``size`` names its byte count when it is passed by address): its size and
             digest, its bytes only in content mode (data kind ``kernel_source``)
  options    a list of options (compile options, include names, JIT options and values):
             one string, shell-quoted
  rtc_out    a buffer hiprtc fills (code, bitcode, log; ``kind`` "text" for a log): its
             size and digest once the call returned, a log's text only in content mode
  handles    a list of handles of ``kind`` (a graph node's dependencies), each looked up
  kernel_node  a hipKernelNodeParams: its kernel, shape and arguments, recorded as a
             launch's are (kernarg bytes and pointer words, in the event's ``extra.launch``)
  memset_node  a hipMemsetParams: a 2D memset whose ``dst`` is translated and bounds-checked
  host_node  a hipHostNodeParams: application host code (never replayable, like host_fn)
  instantiate_params  a hipGraphInstantiateParams: its flags and upload stream
  words      an array of ``size`` 32-bit words the call reads (a CU mask): recorded packed,
             little-endian; replay passes a list of the same words
  int_array  ``size`` C ints the call reads through a pointer (hipFFT's ``n``, ``inembed``):
             recorded as ``words``; replay passes a numpy int32 array of them
  pool_props a hipMemPoolProps: its allocation type, handle types, location and maximum size
  lib_array, lib_pointers, lib_scalar, lib_result  a math library's device arrays, arrays of
             device addresses, and scalars it reads or writes through its pointer mode
             (``hrr/api/roles/mathlibs.py``, docs/math-libraries.md)
  attr_value a value the call reads through a pointer, as wide as the attribute the row's
             enum parameter of ``kind`` names (hipMemPoolSetAttribute): its bytes are recorded,
             replay passes a buffer of its own holding them
Output roles (``Out.role``): ``alloc`` (a new allocation; ``kind`` device/pinned, its size
from the ``size`` parameter), ``alias`` (a device address for a host allocation),
``handle`` (``kind``), ``handles`` (a list of handles of ``kind``, each bound at replay),
``value`` (an informational result, recorded when it is a number),
``text`` (a string result, e.g. a lowered name), ``image`` (a linked image: its size and
digest, the name hipModuleLoadData stores it under).

Semantics that capture bookkeeping, replay and the plugins need are row fields too, so
that every list of "calls that do X" is a query on this table (the functions at the end
of this module), never a list of API names elsewhere:
  waits    what a successful return proves complete: ``device`` (all work), ``stream``
           (the row's stream parameter), ``event`` (its first event parameter) or
           ``null_stream`` (a synchronous call ordered on the legacy null stream)
  effect   one irregular device effect: ``record_event``, ``wait_event``,
           ``begin_capture``, ``end_capture``, ``launch_graph``, ``update_exec`` (an
           executable graph takes a graph's nodes)
  pure     a query with no device effect (``--calls`` set-up may leave it out)
  launch   for a kernel launch, where its shape lives (a ``LaunchShape``)
  replays_as  the catalogued call replay issues instead (one launch entry point)
``Param.span``: the bytes a ``ptr`` parameter reaches when no parameter holds its size.
``Param.elem``: bytes per unit of the ``size`` (or ``rows`` width) parameter (hipMemsetD32: 4).
``Param.rows``: the (pitch, width, height) parameters of a strided region (2D memsets and
copies): it reaches ``pitch * (height - 1) + width * elem`` bytes.
``Param.replay_from``: an output whose recorded value replay passes in this parameter's
place (hipMallocPitch's width: replay asks for the recorded pitch, so the allocation is at
least ``pitch * height`` and every recorded 2D access fits it).
``Out.per``: an allocation of ``size`` units of the output ``per`` bytes (a pitched
allocation: ``height`` rows of ``pitch`` bytes), or, without ``size``, of ``per`` bytes
(a module's global: hipModuleGetGlobal's ``bytes``).
"""
from __future__ import annotations

from typing import Callable, Iterable

from hrr.api import mathlibs as _mathlibs
from hrr.api.rowtypes import (NOOP, REAL, STREAM, UNREPLAYABLE, Api, H, LaunchShape, O,  # noqa: F401 - the row API
                              Out, P, Param)

# The core calls' handle kinds, then each math library's (``hrr.api.mathlibs``).
HANDLE_KINDS = ("stream", "event", "module", "function", "graph", "graph_exec", "context", "program",
                "link", "graph_node", "mem_pool") + _mathlibs.HANDLE_KINDS
# Handle kinds whose null handle every call rejects as a GPU rejects a destroyed one
# (hipErrorInvalidValue): replay passes NULL for such a handle that a call the recording saw
# fail named after it was destroyed, so the failure is reproduced and nothing stale is used.
NULL_INVALID_HANDLES = ("mem_pool",)

_HOSTFN_REASON = ("runs the application's own host code, which an archive never carries; "
                  "replay skips it, so work that depends on its side effects may differ")

# hiprtc builds code on the host; what reaches the device is the image a program hands
# to hipModuleLoadData, recorded there, so replay runs no compiler or linker.
_RTC_REASON = ("compiles or links on the host: the code object it makes is recorded where "
               "hipModuleLoadData loads it, so replay needs no compiler")
_PROG, _LINK = H("prog", "program"), H("hip_link_state", "link")
# A graph-node creation's leading parameters and its output.
_GRAPH_DEPS = (H("graph", "graph"), P("pDependencies", "handles", "graph_node"), P("numDependencies"))
_NODE_OUT = (O("pGraphNode", "handle", "graph_node"),)
_POOL, _POOL_OUT = H("mem_pool", "mem_pool"), (O("mem_pool", "handle", "mem_pool"),)

_ROWS: tuple[Api, ...] = (
    # device and errors
    Api("hipInit", "device", (P("flags"),)),
    Api("hipGetDeviceCount", "device", (), (O("count"),), pure=True),
    Api("hipGetDevice", "device", (), (O("deviceId"),), pure=True),
    Api("hipSetDevice", "device", (P("deviceId"),)),
    Api("hipGetDeviceProperties", "device", (P("deviceId"),), (O("prop"),), pure=True),
    Api("hipDeviceSynchronize", "device", sync=True, waits="device"),
    Api("hipDeviceReset", "device", destroys="device", sync=True),
    Api("hipGetLastError", "error"),
    Api("hipPeekAtLastError", "error", pure=True),
    Api("hipGetErrorName", "error", (P("hip_error", "enum", "hipError_t"),), (O("name"),),
        replay=NOOP, reason="a pure lookup with no device effect", pure=True),
    Api("hipGetErrorString", "error", (P("hipError", "enum", "hipError_t"),), (O("string"),),
        replay=NOOP, reason="a pure lookup with no device effect", pure=True),
    Api("hipMemGetInfo", "device", (), (O("free"), O("total")), volatile=True, pure=True),
    Api("hipPointerGetAttributes", "memory", (P("ptr", "ptr"),), (O("attributes"),), pure=True),
    # device: attributes, versions, limits, peers, contexts
    Api("hipDeviceGetAttribute", "device", (P("attr", "enum", "hipDeviceAttribute_t"), P("deviceId")), (O("pi"),),
        pure=True),
    Api("hipDeviceGetName", "device", (P("len"), P("device")), (O("name"),), pure=True),
    Api("hipDeviceGetPCIBusId", "device", (P("len"), P("device")), (O("pciBusId"),), pure=True),
    Api("hipDeviceGetByPCIBusId", "device", (P("pciBusId", "name"),), (O("device"),)),  # a query (its
    # string argument keeps it out of pure_queries(), whose parameters are numbers and handles)
    Api("hipDeviceComputeCapability", "device", (P("device"),), (O("major"), O("minor")), pure=True),
    Api("hipDeviceTotalMem", "device", (P("device"),), (O("bytes"),), pure=True),
    Api("hipDeviceGet", "device", (P("ordinal"),), (O("device"),), pure=True),
    Api("hipDriverGetVersion", "device", (), (O("driverVersion"),), pure=True),
    Api("hipRuntimeGetVersion", "device", (), (O("runtimeVersion"),), pure=True),
    Api("hipDeviceGetLimit", "device", (P("limit", "enum", "hipLimit_t"),), (O("pValue"),), pure=True),
    Api("hipDeviceSetLimit", "device", (P("limit", "enum", "hipLimit_t"), P("value"))),
    Api("hipDeviceGetCacheConfig", "device", (), (O("cacheConfig"),), pure=True),
    Api("hipDeviceSetCacheConfig", "device", (P("cacheConfig", "enum", "hipFuncCache_t"),)),
    Api("hipDeviceGetSharedMemConfig", "device", (), (O("pConfig"),), pure=True),
    Api("hipDeviceSetSharedMemConfig", "device", (P("config", "enum", "hipSharedMemConfig"),)),
    Api("hipGetDeviceFlags", "device", (), (O("flags"),), pure=True),
    Api("hipSetDeviceFlags", "device", (P("flags"),)),
    Api("hipChooseDevice", "device", (P("prop", "ignored"),), (O("device"),), replay=NOOP,
        reason="a pure lookup with no device effect (its hipDeviceProp_t argument is not recorded)"),
    Api("hipDeviceGetStreamPriorityRange", "device", (), (O("leastPriority"), O("greatestPriority")), pure=True),
    Api("hipGetStreamDeviceId", "device", (STREAM,), (O("device"),), pure=True),
    Api("hipDeviceCanAccessPeer", "peer", (P("deviceId"), P("peerDeviceId")), (O("canAccessPeer"),), pure=True),
    Api("hipDeviceEnablePeerAccess", "peer", (P("peerDeviceId"), P("flags"))),
    Api("hipDeviceDisablePeerAccess", "peer", (P("peerDeviceId"),)),
    Api("hipDeviceGetP2PAttribute", "peer", (P("attr", "enum", "hipDeviceP2PAttr"), P("srcDevice"),
                                             P("dstDevice")), (O("value"),), pure=True),
    Api("hipDeviceGetUuid", "device", (P("device"),), (O("uuid"),), pure=True),
    Api("hipCtxGetCurrent", "context", (), (O("ctx", "handle", "context"),)),
    Api("hipCtxSetCurrent", "context", (H("ctx", "context"),)),
    Api("hipCtxGetDevice", "context", (), (O("device"),), pure=True),
    Api("hipCtxSynchronize", "context", sync=True, waits="device"),
    Api("hipCtxGetApiVersion", "context", (H("ctx", "context"),), (O("apiVersion"),), pure=True),
    Api("hipCtxGetFlags", "context", (), (O("flags"),), pure=True),
    Api("hipDevicePrimaryCtxRetain", "context", (P("dev"),), (O("pctx", "handle", "context"),)),
    Api("hipDevicePrimaryCtxRelease", "context", (P("dev"),)),
    Api("hipDevicePrimaryCtxGetState", "context", (P("dev"),), (O("flags"), O("active")), pure=True),
    Api("hipDevicePrimaryCtxSetFlags", "context", (P("dev"), P("flags"))),
    Api("hipDevicePrimaryCtxReset", "context", (P("dev"),), destroys="device", sync=True),
    Api("hipDrvGetErrorName", "error", (P("hipError", "enum", "hipError_t"),), (O("errorString"),),
        replay=NOOP, reason="a pure lookup with no device effect", pure=True),
    Api("hipDrvGetErrorString", "error", (P("hipError", "enum", "hipError_t"),), (O("errorString"),),
        replay=NOOP, reason="a pure lookup with no device effect", pure=True),
    Api("hipProfilerStart", "device"),
    Api("hipProfilerStop", "device"),
    # device memory
    Api("hipMalloc", "memory", (P("size"),), (O("ptr", "alloc", "device", "size"),)),
    Api("hipFree", "memory", (P("ptr", "ptr"),), destroys="alloc", sync=True),
    Api("hipMallocAsync", "memory", (P("size"), STREAM), (O("ptr", "alloc", "device", "size"),),
        stream="stream"),
    Api("hipFreeAsync", "memory", (P("dev_ptr", "ptr"), STREAM), destroys="alloc", stream="stream"),
    # stream-ordered allocation from memory pools (a pool's allocations are device memory)
    Api("hipDeviceGetDefaultMemPool", "mempool", (P("device"),), _POOL_OUT),
    Api("hipDeviceGetMemPool", "mempool", (P("device"),), _POOL_OUT),
    Api("hipDeviceSetMemPool", "mempool", (P("device"), _POOL)),
    Api("hipMemPoolCreate", "mempool", (P("pool_props", "pool_props"),), _POOL_OUT),
    Api("hipMemPoolDestroy", "mempool", (_POOL,), destroys="mem_pool"),
    Api("hipMallocFromPoolAsync", "mempool", (P("size"), _POOL, STREAM), (O("dev_ptr", "alloc", "device", "size"),),
        stream="stream"),
    Api("hipMemPoolTrimTo", "mempool", (_POOL, P("min_bytes_to_hold"))),
    Api("hipMemPoolSetAttribute", "mempool", (_POOL, P("attr", "enum", "hipMemPoolAttr"),
                                              P("value", "attr_value", "hipMemPoolAttr"))),
    # not ``pure``: it writes into memory the app passes (replay: its own 8-byte buffer)
    Api("hipMemPoolGetAttribute", "mempool", (_POOL, P("attr", "enum", "hipMemPoolAttr"),
                                              P("value", "result_buf", span=8))),
    Api("hipMemset", "memory", (P("dst", "ptr", size="sizeBytes"), P("value"), P("sizeBytes")), sync=True,
        waits="null_stream"),
    Api("hipMemsetAsync", "memory", (P("dst", "ptr", size="sizeBytes"), P("value"), P("sizeBytes"), STREAM),
        stream="stream"),
    Api("hipMemcpy", "copy", (P("dst", "copy_dst", size="sizeBytes"),
                              P("src", "copy_src", size="sizeBytes"), P("sizeBytes"),
                              P("kind", "enum", "hipMemcpyKind")), sync=True, waits="null_stream"),
    Api("hipMemcpyAsync", "copy", (P("dst", "copy_dst", size="sizeBytes"),
                                   P("src", "copy_src", size="sizeBytes"), P("sizeBytes"),
                                   P("kind", "enum", "hipMemcpyKind"), STREAM), stream="stream"),
    Api("hipMemcpyHtoD", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "copy_src", size="sizeBytes"),
                                  P("sizeBytes")), sync=True, waits="null_stream"),
    Api("hipMemcpyDtoH", "copy", (P("dst", "copy_dst", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                  P("sizeBytes")), sync=True, waits="null_stream"),
    Api("hipMemcpyDtoD", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                  P("sizeBytes")), sync=True, waits="null_stream"),
    Api("hipMemcpyHtoDAsync", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "copy_src", size="sizeBytes"),
                                       P("sizeBytes"), STREAM), stream="stream"),
    Api("hipMemcpyDtoHAsync", "copy", (P("dst", "copy_dst", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                       P("sizeBytes"), STREAM), stream="stream"),
    Api("hipMemcpyDtoDAsync", "copy", (P("dst", "ptr", size="sizeBytes"), P("src", "ptr", size="sizeBytes"),
                                       P("sizeBytes"), STREAM),
        stream="stream"),
    # memory: memset widths, 2D copies, managed and peer memory
    Api("hipMemsetD8", "memory", (P("dest", "ptr", size="count"), P("value"), P("count")), sync=True,
        waits="null_stream"),
    Api("hipMemsetD16", "memory", (P("dest", "ptr", size="count", elem=2), P("value"), P("count")), sync=True,
        waits="null_stream"),
    Api("hipMemsetD32", "memory", (P("dest", "ptr", size="count", elem=4), P("value"), P("count")), sync=True,
        waits="null_stream"),
    Api("hipMemsetD8Async", "memory", (P("dest", "ptr", size="count"), P("value"), P("count"), STREAM),
        stream="stream"),
    Api("hipMemsetD16Async", "memory", (P("dest", "ptr", size="count", elem=2), P("value"), P("count"), STREAM),
        stream="stream"),
    Api("hipMemsetD32Async", "memory", (P("dst", "ptr", size="count", elem=4), P("value"), P("count"), STREAM),
        stream="stream"),
    Api("hipMemset2D", "memory", (P("dst", "ptr", rows=("pitch", "width", "height")), P("pitch"), P("value"),
                                  P("width"), P("height")), sync=True, waits="null_stream"),
    Api("hipMemset2DAsync", "memory", (P("dst", "ptr", rows=("pitch", "width", "height")), P("pitch"),
                                       P("value"), P("width"), P("height"), STREAM), stream="stream"),
    Api("hipMemsetD2D8", "memory", (P("dst", "ptr", rows=("dstPitch", "width", "height")), P("dstPitch"),
                                    P("value"), P("width"), P("height")), sync=True, waits="null_stream"),
    Api("hipMemsetD2D16", "memory", (P("dst", "ptr", rows=("dstPitch", "width", "height"), elem=2),
                                     P("dstPitch"), P("value"), P("width"), P("height")), sync=True,
        waits="null_stream"),
    Api("hipMemsetD2D32", "memory", (P("dst", "ptr", rows=("dstPitch", "width", "height"), elem=4),
                                     P("dstPitch"), P("value"), P("width"), P("height")), sync=True,
        waits="null_stream"),
    Api("hipMallocPitch", "memory", (P("width", replay_from="pitch"), P("height")),
        (O("ptr", "alloc", "device", "height", per="pitch"), O("pitch"))),
    Api("hipMemAllocPitch", "memory", (P("widthInBytes", replay_from="pitch"), P("height"),
                                       P("elementSizeBytes")),
        (O("dptr", "alloc", "device", "height", per="pitch"), O("pitch"))),
    Api("hipMemcpy2D", "copy", (P("dst", "strided", "dst", rows=("dpitch", "width", "height")), P("dpitch"),
                                P("src", "strided", "src", rows=("spitch", "width", "height")), P("spitch"),
                                P("width"), P("height"), P("kind", "enum", "hipMemcpyKind")),
        sync=True, waits="null_stream"),
    Api("hipMemcpy2DAsync", "copy", (P("dst", "strided", "dst", rows=("dpitch", "width", "height")),
                                     P("dpitch"), P("src", "strided", "src", rows=("spitch", "width", "height")),
                                     P("spitch"), P("width"), P("height"), P("kind", "enum", "hipMemcpyKind"),
                                     STREAM), stream="stream"),
    Api("hipMemcpyWithStream", "copy", (P("dst", "copy_dst", size="sizeBytes"), P("src", "copy_src", size="sizeBytes"),
                                        P("sizeBytes"), P("kind", "enum", "hipMemcpyKind"), STREAM),
        stream="stream", sync=True, waits="stream"),
    Api("hipMemcpyPeer", "copy", (P("dst", "ptr", size="sizeBytes"), P("dstDeviceId"),
                                  P("src", "ptr", size="sizeBytes"), P("srcDeviceId"), P("sizeBytes")), sync=True),
    Api("hipMemcpyPeerAsync", "copy", (P("dst", "ptr", size="sizeBytes"), P("dstDeviceId"),
                                       P("src", "ptr", size="sizeBytes"), P("srcDevice"), P("sizeBytes"), STREAM),
        stream="stream"),
    Api("hipMallocManaged", "memory", (P("size"), P("flags")), (O("dev_ptr", "alloc", "pinned", "size"),)),
    Api("hipMemPrefetchAsync", "memory", (P("dev_ptr", "ptr", size="count"), P("count"), P("device"), STREAM),
        stream="stream"),
    Api("hipMemAdvise", "memory", (P("dev_ptr", "ptr", size="count"), P("count"), P("advice"), P("device"))),
    Api("hipMemGetAddressRange", "memory", (P("dptr", "ptr"),), (O("pbase"), O("psize")), pure=True),
    Api("hipMemPtrGetInfo", "memory", (P("ptr", "ptr"),), (O("size"),), pure=True),
    Api("hipHostGetFlags", "pinned", (P("hostPtr", "ptr"),), (O("flagsPtr"),), pure=True),
    Api("hipExtMallocWithFlags", "memory", (P("sizeBytes"), P("flags")),
        (O("ptr", "alloc", "device", "sizeBytes"),)),
    Api("hipMemAllocHost", "pinned", (P("size"),), (O("pp", "alloc", "pinned", "size"),)),
    # queries, but not ``pure``: they write into memory the app passes (replay: its own buffer)
    Api("hipPointerGetAttribute", "memory", (P("data", "result_buf", span=16), P("attribute"), P("ptr", "ptr"))),
    Api("hipMemRangeGetAttribute", "memory", (P("data", "result_buf", size="data_size"), P("data_size"),
                                              P("attribute"), P("dev_ptr", "ptr", size="count"), P("count"))),
    # pinned host memory
    Api("hipHostMalloc", "pinned", (P("size"), P("flags")), (O("ptr", "alloc", "pinned", "size"),)),
    Api("hipMallocHost", "pinned", (P("size"),), (O("ptr", "alloc", "pinned", "size"),)),
    Api("hipHostAlloc", "pinned", (P("size"), P("flags")), (O("ptr", "alloc", "pinned", "size"),)),
    Api("hipHostFree", "pinned", (P("ptr", "ptr"),), destroys="alloc", sync=True),
    Api("hipFreeHost", "pinned", (P("ptr", "ptr"),), destroys="alloc", sync=True),
    Api("hipHostRegister", "pinned", (P("hostPtr", "host_range", size="sizeBytes"),
                                      P("sizeBytes"), P("flags"))),
    Api("hipHostUnregister", "pinned", (P("hostPtr", "ptr"),), destroys="alloc", sync=True),
    Api("hipHostGetDevicePointer", "pinned", (P("hstPtr", "ptr"), P("flags")),
        (O("devPtr", "alias"),)),
    # streams and events
    Api("hipStreamCreate", "stream", (), (O("stream", "handle", "stream"),)),
    Api("hipStreamCreateWithFlags", "stream", (P("flags"),), (O("stream", "handle", "stream"),)),
    Api("hipStreamDestroy", "stream", (STREAM,), destroys="stream"),
    Api("hipStreamSynchronize", "stream", (STREAM,), sync=True, stream="stream", waits="stream"),
    Api("hipStreamQuery", "stream", (STREAM,), stream="stream", volatile=True, waits="stream"),
    Api("hipStreamWaitEvent", "stream", (STREAM, H("event", "event"), P("flags")), stream="stream",
        effect="wait_event"),
    Api("hipEventCreate", "event", (), (O("event", "handle", "event"),)),
    Api("hipEventCreateWithFlags", "event", (P("flags"),), (O("event", "handle", "event"),)),
    Api("hipEventRecord", "event", (H("event", "event"), STREAM), stream="stream",
        effect="record_event"),
    Api("hipEventSynchronize", "event", (H("event", "event"),), sync=True, waits="event"),
    Api("hipEventQuery", "event", (H("event", "event"),), volatile=True, waits="event"),
    Api("hipEventElapsedTime", "event", (H("start", "event"), H("stop", "event")), (O("ms"),),
        volatile=True, pure=True),
    Api("hipEventDestroy", "event", (H("event", "event"),), destroys="event"),
    Api("hipLaunchHostFunc", "stream", (STREAM, P("fn", "host_fn"), P("userData", "user_data")),
        replay=UNREPLAYABLE, reason=_HOSTFN_REASON, stream="stream"),
    Api("hipStreamWaitValue32", "stream", (STREAM, P("ptr", "ptr", span=4), P("value"), P("flags"),
                                           P("mask", optional=True, default=0xFFFFFFFF)), stream="stream"),
    Api("hipStreamWriteValue32", "stream", (STREAM, P("ptr", "ptr", span=4), P("value"), P("flags")),
        stream="stream"),
    # streams and events: priorities, flags, callbacks
    Api("hipStreamCreateWithPriority", "stream", (P("flags"), P("priority")), (O("stream", "handle", "stream"),)),
    Api("hipExtStreamCreateWithCUMask", "stream", (P("cuMaskSize"), P("cuMask", "words", size="cuMaskSize", elem=4)),
        (O("stream", "handle", "stream"),)),
    Api("hipStreamGetPriority", "stream", (STREAM,), (O("priority"),), pure=True),
    Api("hipStreamGetFlags", "stream", (STREAM,), (O("flags"),), pure=True),
    Api("hipStreamGetDevice", "stream", (STREAM,), (O("device"),), pure=True),
    Api("hipStreamGetId", "stream", (STREAM,), (O("streamId"),), pure=True),
    Api("hipStreamAddCallback", "stream", (STREAM, P("callback", "host_fn"), P("userData", "user_data"),
                                           P("flags")), replay=UNREPLAYABLE, reason=_HOSTFN_REASON, stream="stream"),
    Api("hipStreamWaitValue64", "stream", (STREAM, P("ptr", "ptr", span=8), P("value"), P("flags"), P("mask")),
        stream="stream"),
    Api("hipStreamWriteValue64", "stream", (STREAM, P("ptr", "ptr", span=8), P("value"), P("flags")),
        stream="stream"),
    Api("hipEventRecordWithFlags", "event", (H("event", "event"), STREAM, P("flags")), stream="stream",
        effect="record_event"),
    Api("hipStreamGetCaptureInfo_v2", "graph", (STREAM, P("dependencies_out")),
        (O("captureStatus_out"), O("id_out"), O("graph_out"), O("numDependencies_out")), pure=True),
    # stream capture and graphs
    Api("hipStreamBeginCapture", "graph", (STREAM, P("mode", "enum", "hipStreamCaptureMode")),
        stream="stream", effect="begin_capture"),
    Api("hipStreamEndCapture", "graph", (STREAM,), (O("graph", "handle", "graph"),), stream="stream",
        effect="end_capture"),
    Api("hipStreamIsCapturing", "graph", (STREAM,), (O("status"),), stream="stream", pure=True),
    Api("hipStreamGetCaptureInfo", "graph", (STREAM,), (O("status"), O("id")), stream="stream",
        pure=True),
    Api("hipThreadExchangeStreamCaptureMode", "graph", (P("mode", "enum", "hipStreamCaptureMode",
                                                          optional=True),), (O("mode"),)),
    Api("hipGraphInstantiate", "graph", (H("graph", "graph"), P("bufferSize")),
        (O("graphExec", "handle", "graph_exec"), O("errorNode"), O("log"))),
    Api("hipGraphInstantiateWithFlags", "graph", (H("graph", "graph"), P("flags")),
        (O("graphExec", "handle", "graph_exec"),)),
    Api("hipGraphLaunch", "graph", (H("graphExec", "graph_exec"), STREAM), stream="stream",
        effect="launch_graph"),
    Api("hipGraphExecDestroy", "graph", (H("graphExec", "graph_exec"),), destroys="graph_exec"),
    Api("hipGraphDestroy", "graph", (H("graph", "graph"),), destroys="graph"),
    # graphs: explicit construction, nodes, updates
    Api("hipStreamBeginCaptureToGraph", "graph", (STREAM, H("graph", "graph"),
                                                  P("dependencies", "handles", "graph_node"),
                                                  P("dependencyData", "ignored"), P("numDependencies"),
                                                  P("mode", "enum", "hipStreamCaptureMode")),
        stream="stream", effect="begin_capture"),
    Api("hipGraphCreate", "graph", (P("flags"),), (O("pGraph", "handle", "graph"),)),
    Api("hipGraphAddKernelNode", "graph", (*_GRAPH_DEPS, P("pNodeParams", "kernel_node")), _NODE_OUT),
    Api("hipGraphAddMemcpyNode1D", "graph", (*_GRAPH_DEPS, P("dst", "copy_dst", size="count"),
                                             P("src", "copy_src", size="count"), P("count"),
                                             P("kind", "enum", "hipMemcpyKind")), _NODE_OUT),
    Api("hipGraphAddMemsetNode", "graph", (*_GRAPH_DEPS, P("pMemsetParams", "memset_node")), _NODE_OUT),
    Api("hipGraphAddEmptyNode", "graph", _GRAPH_DEPS, _NODE_OUT),
    Api("hipGraphAddEventRecordNode", "graph", (*_GRAPH_DEPS, H("event", "event")), _NODE_OUT),
    Api("hipGraphAddEventWaitNode", "graph", (*_GRAPH_DEPS, H("event", "event")), _NODE_OUT),
    Api("hipGraphAddChildGraphNode", "graph", (*_GRAPH_DEPS, H("childGraph", "graph")), _NODE_OUT),
    Api("hipGraphAddHostNode", "graph", (*_GRAPH_DEPS, P("pNodeParams", "host_node")), _NODE_OUT,
        replay=UNREPLAYABLE, reason=_HOSTFN_REASON),
    Api("hipGraphAddDependencies", "graph", (H("graph", "graph"), P("from_", "handles", "graph_node"),
                                             P("to", "handles", "graph_node"), P("numDependencies"))),
    Api("hipGraphRemoveDependencies", "graph", (H("graph", "graph"), P("from_", "handles", "graph_node"),
                                                P("to", "handles", "graph_node"), P("numDependencies"))),
    # Node lists are not pure: replay binds the handles they return (a --calls set-up needs them).
    Api("hipGraphGetNodes", "graph", (H("graph", "graph"),), (O("nodes", "handles", "graph_node"), O("numNodes"))),
    Api("hipGraphGetRootNodes", "graph", (H("graph", "graph"),),
        (O("pRootNodes", "handles", "graph_node"), O("pNumRootNodes"))),
    Api("hipGraphGetEdges", "graph", (H("graph", "graph"),),
        (O("from_", "handles", "graph_node"), O("to", "handles", "graph_node"), O("numEdges"))),
    Api("hipGraphNodeGetType", "graph", (H("node", "graph_node"),), (O("pType"),), pure=True),
    Api("hipGraphNodeGetDependencies", "graph", (H("node", "graph_node"),),
        (O("pDependencies", "handles", "graph_node"), O("pNumDependencies"))),
    Api("hipGraphNodeGetDependentNodes", "graph", (H("node", "graph_node"),),
        (O("pDependentNodes", "handles", "graph_node"), O("pNumDependentNodes"))),
    Api("hipGraphKernelNodeGetParams", "graph", (H("node", "graph_node"),), (O("pNodeParams"),), pure=True),
    Api("hipGraphKernelNodeSetParams", "graph", (H("node", "graph_node"), P("pNodeParams", "kernel_node"))),
    Api("hipGraphInstantiateWithParams", "graph", (H("graph", "graph"), P("instantiateParams", "instantiate_params")),
        (O("pGraphExec", "handle", "graph_exec"),)),
    Api("hipGraphExecKernelNodeSetParams", "graph", (H("hGraphExec", "graph_exec"), H("node", "graph_node"),
                                                     P("pNodeParams", "kernel_node"))),
    Api("hipGraphDestroyNode", "graph", (H("node", "graph_node"),), destroys="graph_node"),
    Api("hipGraphClone", "graph", (H("originalGraph", "graph"),), (O("pGraphClone", "handle", "graph"),)),
    Api("hipGraphExecUpdate", "graph", (H("hGraphExec", "graph_exec"), H("hGraph", "graph"),
                                        P("hErrorNode_out", "ignored")), (O("updateResult_out"),),
        effect="update_exec"),
    Api("hipGraphUpload", "graph", (H("graphExec", "graph_exec"), STREAM), stream="stream"),
    Api("hipGraphExecGetFlags", "graph", (H("graphExec", "graph_exec"),), (O("flags"),), pure=True),
    Api("hipGraphDebugDotPrint", "graph", (H("graph", "graph"), P("path", "name"), P("flags")), replay=NOOP,
        reason="writes a description of the graph to a file of the application's; replay writes no file"),
    # modules and launches
    Api("hipModuleLoadData", "module", (P("image", "code"),), (O("module", "handle", "module"),)),
    Api("hipModuleGetFunction", "module", (H("module", "module"), P("kname", "name")),
        (O("function", "handle", "function"),)),
    Api("hipModuleUnload", "module", (H("module", "module"),), destroys="module"),
    Api("hipModuleLaunchKernel", "launch", (
        H("f", "function"), P("gridDimX"), P("gridDimY"), P("gridDimZ"), P("blockDimX"),
        P("blockDimY"), P("blockDimZ"), P("sharedMemBytes"), STREAM,
        P("kernelParams", "launch"), P("extra", "launch")), stream="stream",
        launch=LaunchShape(("gridDimX", "gridDimY", "gridDimZ"), ("blockDimX", "blockDimY", "blockDimZ"),
                           "sharedMemBytes", "kernelParams", "extra")),
    Api("hipLaunchKernel", "launch", (
        H("function_address", "function"), P("numBlocks", "dim3"), P("dimBlocks", "dim3"),
        P("args", "launch"), P("sharedMemBytes"), STREAM), stream="stream",
        launch=LaunchShape(("numBlocks",), ("dimBlocks",), "sharedMemBytes", "args"),
        replays_as="hipModuleLaunchKernel"),
    # modules: globals, attributes, occupancy, ext launches
    Api("hipModuleGetGlobal", "module", (H("hmod", "module"), P("name", "name")),
        (O("dptr", "alloc", "device", per="bytes"), O("bytes"))),
    Api("hipModuleLoadDataEx", "module", (P("image", "code"), P("numOptions"), P("optionValues", "ignored")),
        (O("module", "handle", "module"), O("options"))),
    Api("hipModuleLoad", "module", (P("fname", "code", "file"),), (O("module", "handle", "module"),),
        replays_as="hipModuleLoadData"),
    Api("hipModuleGetFunctionCount", "module", (H("mod", "module"),), (O("count"),), pure=True),
    Api("hipFuncGetAttributes", "module", (H("func", "function"),), (O("attr"),), pure=True),
    Api("hipFuncGetAttribute", "module", (P("attrib"), H("hfunc", "function")), (O("value"),), pure=True),
    Api("hipFuncSetAttribute", "module", (H("func", "function"), P("attr"), P("value"))),
    Api("hipFuncSetCacheConfig", "module", (H("func", "function"), P("config"))),
    Api("hipFuncSetSharedMemConfig", "module", (H("func", "function"), P("config"))),
    Api("hipModuleOccupancyMaxActiveBlocksPerMultiprocessor", "module", (
        H("f", "function"), P("blockSize"), P("dynSharedMemPerBlk")), (O("numBlocks"),), pure=True),
    Api("hipModuleOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "module", (
        H("f", "function"), P("blockSize"), P("dynSharedMemPerBlk"), P("flags")), (O("numBlocks"),), pure=True),
    Api("hipModuleOccupancyMaxPotentialBlockSize", "module", (
        H("f", "function"), P("dynSharedMemPerBlk"), P("blockSizeLimit")), (O("gridSize"), O("blockSize")),
        pure=True),
    Api("hipModuleOccupancyMaxPotentialBlockSizeWithFlags", "module", (
        H("f", "function"), P("dynSharedMemPerBlk"), P("blockSizeLimit"), P("flags")),
        (O("gridSize"), O("blockSize")), pure=True),
    Api("hipOccupancyMaxPotentialBlockSize", "module", (
        H("f", "function"), P("dynSharedMemPerBlk"), P("blockSizeLimit")), (O("gridSize"), O("blockSize")),
        pure=True),
    Api("hipOccupancyMaxActiveBlocksPerMultiprocessor", "module", (
        H("f", "function"), P("blockSize"), P("dynSharedMemPerBlk")), (O("numBlocks"),), pure=True),
    Api("hipExtLaunchKernel", "launch", (
        H("function_address", "function"), P("numBlocks", "dim3"), P("dimBlocks", "dim3"), P("args", "launch"),
        P("sharedMemBytes"), STREAM, H("startEvent", "event"), H("stopEvent", "event"), P("flags")),
        stream="stream", launch=LaunchShape(("numBlocks",), ("dimBlocks",), "sharedMemBytes", "args")),
    Api("hipModuleLaunchCooperativeKernel", "launch", (
        H("f", "function"), P("gridDimX"), P("gridDimY"), P("gridDimZ"), P("blockDimX"),
        P("blockDimY"), P("blockDimZ"), P("sharedMemBytes"), STREAM, P("kernelParams", "launch")),
        stream="stream",
        launch=LaunchShape(("gridDimX", "gridDimY", "gridDimZ"), ("blockDimX", "blockDimY", "blockDimZ"),
                           "sharedMemBytes", "kernelParams")),
    Api("hipLaunchCooperativeKernel", "launch", (
        H("f", "function"), P("gridDim", "dim3"), P("blockDimX", "dim3"), P("kernelParams", "launch"),
        P("sharedMemBytes"), STREAM), stream="stream",
        launch=LaunchShape(("gridDim",), ("blockDimX",), "sharedMemBytes", "kernelParams")),
    # hiprtc: programs and the link API
    Api("hiprtcCreateProgram", "hiprtc", (P("src", "source"), P("name", "name"), P("numHeaders"),
                                          P("headers", "source"), P("includeNames", "options")),
        (O("prog", "handle", "program"),), replay=NOOP, reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcCompileProgram", "hiprtc", (_PROG, P("numOptions"), P("options", "options")),
        replay=NOOP, reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcDestroyProgram", "hiprtc", (_PROG,), destroys="program", replay=NOOP,
        reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcGetCodeSize", "hiprtc", (_PROG,), (O("codeSizeRet"),), replay=NOOP, reason=_RTC_REASON,
        module="hiprtc", pure=True),
    Api("hiprtcGetCode", "hiprtc", (_PROG, P("code", "rtc_out", "code")), replay=NOOP, reason=_RTC_REASON,
        module="hiprtc"),
    Api("hiprtcGetBitcodeSize", "hiprtc", (_PROG,), (O("bitcode_size"),), replay=NOOP, reason=_RTC_REASON,
        module="hiprtc", pure=True),
    Api("hiprtcGetBitcode", "hiprtc", (_PROG, P("bitcode", "rtc_out", "code")), replay=NOOP,
        reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcGetProgramLogSize", "hiprtc", (_PROG,), (O("logSizeRet"),), replay=NOOP, reason=_RTC_REASON,
        module="hiprtc", pure=True),
    Api("hiprtcGetProgramLog", "hiprtc", (_PROG, P("log", "rtc_out", "text")), replay=NOOP,
        reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcAddNameExpression", "hiprtc", (_PROG, P("name_expression", "name")), replay=NOOP,
        reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcGetLoweredName", "hiprtc", (_PROG, P("name_expression", "name")), (O("lowered_name", "text"),),
        replay=NOOP, reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcVersion", "hiprtc", (), (O("major"), O("minor")), replay=NOOP, reason=_RTC_REASON,
        module="hiprtc", pure=True),
    Api("hiprtcGetErrorString", "hiprtc", (P("result", "enum", "hiprtcResult"),), (O("string"),),
        replay=NOOP, reason="a pure lookup with no device effect", module="hiprtc", pure=True),
    Api("hiprtcLinkCreate", "hiprtc", (P("num_options"), P("option_ptr", "options"),
                                       P("option_vals_pptr", "options")),
        (O("hip_link_state", "handle", "link"),), replay=NOOP, reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcLinkAddData", "hiprtc", (_LINK, P("input_type", "enum", "hipJitInputType"),
                                        P("image", "source", size="image_size"), P("image_size"),
                                        P("name", "name"), P("num_options"), P("options_ptr", "options"),
                                        P("option_values", "options")),
        replay=NOOP, reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcLinkAddFile", "hiprtc", (_LINK, P("input_type", "enum", "hipJitInputType"),
                                        P("file_path", "name"), P("num_options"), P("options_ptr", "options"),
                                        P("option_values", "options")),
        replay=NOOP, reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcLinkComplete", "hiprtc", (_LINK,), (O("bin_out", "image"), O("size_out")), replay=NOOP,
        reason=_RTC_REASON, module="hiprtc"),
    Api("hiprtcLinkDestroy", "hiprtc", (_LINK,), destroys="link", replay=NOOP, reason=_RTC_REASON,
        module="hiprtc"),
)

# Each math library's rows follow the HIP calls (``hrr.api.mathlibs``: one module a family).
_ROWS += _mathlibs.ROWS
CATALOGUE: dict[str, Api] = {row.name: row for row in _ROWS}


# ------------------------------------------------------------------ queries on the rows
# Every "calls that do X" list in capture, replay and the plugins is one of these, so a
# new row is seen everywhere it belongs without editing a list of names.
def names(where: Callable[[Api], bool]) -> frozenset[str]:
    """The names of every row for which ``where(row)`` is true."""
    return frozenset(row.name for row in _ROWS if where(row))


def allocating(kind: str | None = None) -> frozenset[str]:
    """Calls that return a new allocation (of ``kind``, "device" or "pinned", if given)."""
    return names(lambda r: any(o.role == "alloc" and kind in (None, o.kind) for o in r.outs))


def releasing() -> frozenset[str]:
    """Calls whose first parameter is an allocation they release (frees, unregister)."""
    return names(lambda r: r.destroys == "alloc")


def registering() -> frozenset[str]:
    """Calls that pin application memory in place (a ``host_range`` parameter)."""
    return names(lambda r: any(p.role == "host_range" for p in r.params))


def aliasing() -> frozenset[str]:
    """Calls that return a device address for a host allocation (an ``alias`` output)."""
    return names(lambda r: any(o.role == "alias" for o in r.outs))


def launching() -> frozenset[str]:
    """Kernel launches."""
    return names(lambda r: r.launch is not None)


def creating(kind: str) -> frozenset[str]:
    """Calls that return a new handle of ``kind``."""
    return names(lambda r: any(o.role == "handle" and o.kind == kind for o in r.outs))


def destroying(kind: str) -> frozenset[str]:
    """Calls that release a ``kind`` ("alloc", a handle kind, or "device": everything)."""
    return names(lambda r: r.destroys == kind)


def waiting(what: str) -> frozenset[str]:
    """Calls whose successful return proves ``what`` complete (see ``Api.waits``)."""
    return names(lambda r: r.waits == what)


def with_effect(effect: str) -> frozenset[str]:
    """Calls with the irregular device effect ``effect`` (see ``Api.effect``)."""
    return names(lambda r: r.effect == effect)


def running_host_code() -> frozenset[str]:
    """Calls that enqueue an application host function, or put one in a graph (never replayable)."""
    return names(lambda r: any(p.role in ("host_fn", "host_node") for p in r.params))


def adding_kernel_nodes() -> frozenset[str]:
    """Calls that put a kernel and its arguments into a graph or an executable graph
    (a ``kernel_node`` parameter): their pointers are read at each launch of the graph."""
    return names(lambda r: any(p.role == "kernel_node" for p in r.params))


def pure_queries() -> frozenset[str]:
    """Queries with no device effect."""
    return names(lambda r: r.pure)




def rows() -> Iterable[Api]:
    """Every catalogue row, in declaration order."""
    return iter(_ROWS)


def get(name: str) -> Api:
    """The row for ``name``; KeyError names the call when it is not catalogued."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise KeyError(f"{name} is not in the HIP API catalogue") from None


# ------------------------------------------------------------------ test-only extension
class _Extension:
    """The catalogue with extra rows while the ``with`` block runs (see ``extended``)."""

    def __init__(self, new_rows: tuple[Api, ...]) -> None:
        names = [r.name for r in new_rows]
        taken = sorted({n for n in names if n in CATALOGUE or names.count(n) > 1})
        if taken:
            raise ValueError(f"catalogue rows already named {', '.join(taken)}")
        self.rows = new_rows
        self._saved: tuple[Api, ...] | None = None

    def __enter__(self) -> tuple[Api, ...]:
        global _ROWS
        self._saved = _ROWS
        _ROWS = _ROWS + self.rows
        CATALOGUE.update((r.name, r) for r in self.rows)
        return self.rows

    def __exit__(self, *exc: object) -> None:
        global _ROWS
        for r in self.rows:
            CATALOGUE.pop(r.name, None)
        _ROWS = tuple(r for r in _ROWS if r not in self.rows)


def extended(*new_rows: Api) -> _Extension:
    """Test-only: ``with extended(row, ...):`` the catalogue also holds ``new_rows`` (after
    every built-in row) until the block ends. Everything that reads the catalogue when it
    acts sees them: ``CATALOGUE``, ``get``, ``rows`` and every query above, capture's
    wrappers (built when a session starts), replay's per-row plans, the record schema and
    ``hrr info``. ValueError when a name is already a row."""
    return _Extension(tuple(new_rows))
