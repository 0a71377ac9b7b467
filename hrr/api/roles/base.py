"""What every role shares: the narrow interfaces to capture and replay, the record being
replayed (``Call``), the checks and helpers roles are built from, the ``Role`` and
``OutRole`` base classes and the tables a role class is registered in (``register``)."""
from __future__ import annotations

import ctypes
import math
import numbers
from typing import Any, Callable, ClassVar, NamedTuple, Protocol, Sequence, TypeVar

import xxhash

from hrr.api.catalogue import Api, Out, Param
from hrr.api.wire import ERR, EXTRA, SEQ
from hrr.hiptypes import HANDLE_TYPES, address_or_zero, handle_or_zero
from hrr.hiptypes.kernargs import LaunchInfo
from hrr.errors import EventRefused

Encoder = Callable[[tuple], Any]               # app args -> wire value (or a callable of the result)
After = Callable[[tuple, tuple, int], None]    # (args, result, seq), once the call is recorded
Enricher = Callable[[tuple, tuple, dict], None]  # (args, result, extra), before the record is written
Check = Callable[[Any], Any]                   # recorded value -> validated value (or EventRefused)

_U64 = 1 << 64
MAX_SIZE = (1 << 63) - 1                       # no byte count an archive names may be larger
HOST_KINDS = ("pinned", "registered")          # allocations replay owns as host memory
DEVICE, REGISTERED = "device", "registered"    # allocation kinds (hrr.allocations)
#: ``CaptureServices.launch_scope``: no launch hook; hooks that act only on launches with a
#: pointer word into a non-device allocation; a hook that sees every launch.
LAUNCH_NONE, LAUNCH_HOST, LAUNCH_ALL = 0, 1, 2


# ------------------------------------------------------------------ the narrow interfaces
class CaptureServices(Protocol):
    """What capture roles may ask of the session that records the call."""

    def find_allocation(self, addr: int) -> Any:
        """The tracked allocation holding ``addr``, or None."""

    def host_blob(self, kind: str, obj: Any, addr: int, n: int) -> str | None:
        """The blob of ``n`` bytes of app memory at ``addr``, if content ``kind`` is recorded."""

    def put_code_object(self, image: Any) -> str | None:
        """The name the code object ``image`` is stored under (None: not bytes)."""

    def host_rows_blob(self, kind: str, obj: Any, addr: int, pitch: int, width: int, height: int) -> str | None:
        """The blob of the ``height`` rows of ``width`` bytes, ``pitch`` apart, of app memory
        at ``addr`` (packed), if content ``kind`` is recorded."""

    def expect_d2h(self, pending: tuple[int, ...] | None) -> None:
        """The current call copies to host memory once its stream has run it: ``(stream,
        addr, n)``, or ``(stream, addr, n, pitch, width)`` for ``n // width`` strided rows;
        None when it has nothing to await."""

    def d2h_issued(self, ok: bool, seq: int) -> None:
        """The current call (record ``seq``) returned: its pending copy is awaited if ``ok``."""

    def track_allocation(self, base: int, size: int, kind: str) -> None:
        """A new allocation of ``kind`` now lives at ``base``."""

    def track_alias(self, host: int, alias: int) -> None:
        """``alias`` is a device address of the allocation holding ``host``."""

    def add_unreplayable(self, api: str, reason: str) -> None:
        """List ``api`` under the manifest's ``unreplayable_apis``."""

    def note_function(self, name: str, function: Any, extra: dict) -> None:
        """A kernel function handle was made: remember its name and layout."""

    def function_info(self, func: Any) -> tuple[str, Any, tuple[int, ...]]:
        """(kernel name, parameter layout or None, its pointer-word offsets) of a function handle."""

    def scan_pointers(self, offsets: tuple[int, ...], kernargs: bytes) -> tuple[list, list]:
        """The kernarg words at ``offsets`` that point into a live allocation (PointerWord),
        and the same as the event stores them."""

    def launch_watched(self) -> bool:
        """Whether a stage implements ``hrr_capture_launch`` now (else no LaunchInfo is made)."""

    def run_launch(self, info: LaunchInfo) -> dict | None:
        """The plugins' records for a launch."""

    def launch_scope(self) -> int:
        """0: no stage sees launches; 1: only launches with a pointer word into non-device
        memory; 2: every launch (``LAUNCH_*``)."""


class ReplayServices(Protocol):
    """What replay roles may ask of the replayer of one process archive."""

    charges_device_memory: bool   # device memory is host RAM (the sim): charge it too

    def translate(self, addr: int) -> int | None:
        """Replay's address for the capture address ``addr`` (None: in no allocation)."""

    def find(self, addr: int) -> Any:
        """The replay allocation holding the capture address ``addr``, or None."""

    def lookup_handle(self, kind: str, value: int) -> Any:
        """Replay's handle for a capture handle value; KeyError when unknown."""

    def bind_handle(self, kind: str, capture_value: int, replay_obj: Any) -> None:
        """Remember a handle the call made."""

    def add_allocation(self, capture_base: int, replay_base: int, size: int, kind: str, *,
                       keepalive: Any = None, charged: int = 0, owner: int = 0) -> None:
        """Remember an allocation the call made (``owner``: the host base of an alias)."""

    def buffer(self, n: int, what: str) -> Any:
        """A zeroed replay-owned host buffer (numpy uint8), charged before it is made."""

    def hold(self, buf: Any) -> None:
        """Keep ``buf`` alive while the current call's work may use it."""

    def keep(self, buf: Any) -> None:
        """Keep ``buf`` alive until the replay ends (a graph node's host buffer: every
        launch of its graph uses it)."""

    def read_blob(self, name: str) -> bytes:
        """A blob's bytes (BlobError when it cannot be used)."""

    def read_queued_blob(self, name: str) -> bytes:
        """A blob a host function holds until the next device synchronisation."""

    def enqueue_host_fn(self, stream: Any, fn: Callable[[], None]) -> int:
        """Queue ``fn`` on ``stream``; returns the backend's error."""

    def expect(self, call: "Call", read: Callable[[], bytes], blob: str | None, n: int) -> None:
        """Compare what ``read`` returns with ``blob`` once the call's copy has completed."""

    def read_code_object(self, name: str) -> Any:
        """A code object's image."""

    def dim3(self, x: int, y: int, z: int) -> Any:
        """The backend's dim3."""

    def poison_address(self) -> int:
        """Memory replay owns but never allocated through HIP."""

    def device_bytes(self, replay_addr: int, n: int) -> bytes:
        """The ``n`` bytes of device memory at replay's address ``replay_addr``, read once
        every queued operation ran (EventRefused when the read fails)."""

    def device_array(self, data: bytes, what: str) -> int:
        """Device memory of replay's own holding ``data`` (freed when the process's replay ends)."""

    def count(self, counter: str) -> None:
        """Add one to a replay counter."""

    def charge(self, n: int, what: str) -> int:
        """Charge ``n`` host bytes against --max-host-bytes (EventRefused when over)."""

    def release(self, n: int) -> None:
        """Give back ``n`` charged bytes."""


class Call:
    """One record being replayed: its row, its schema-checked wire record
    ``[seq, tid, api, args, err, outs, extra]`` (``wire``), the validated recorded values
    (``raw``), what the backend is given (``args``), work to do once every argument is
    decoded (``queued``) and once the call succeeded (``after``). The record's ``Event``
    (``event``) is built by replay only when something asks for it (a plugin's per-event
    hook), then kept here."""

    __slots__ = ("row", "wire", "raw", "args", "after", "queued", "event")

    def __init__(self, row: Api, wire: list, raw: list) -> None:
        self.row, self.wire, self.raw = row, wire, raw
        self.args: list = raw
        self.after: list[Callable[[], None]] = []
        self.queued: list[Callable[[], None]] = []
        self.event: Any = None

    @property
    def seq(self) -> int:
        """The record's sequence number."""
        return self.wire[SEQ]

    @property
    def err(self) -> int:
        """The error the recorded call returned."""
        return self.wire[ERR]

    @property
    def extra(self) -> dict:
        """The record's extra map (launch arguments, plugin records)."""
        return self.wire[EXTRA]


Action = Callable[[Call], Any]


# ------------------------------------------------------------------ shared helpers
def scalar(v: Any) -> Any:
    """Capture: a scalar argument as a wire number (numpy and ctypes numbers included)."""
    if v is None or type(v) in (int, float, bool, str):
        return v
    if isinstance(v, (int, numbers.Integral)):
        return int(v)
    if isinstance(v, (float, numbers.Real)):
        return float(v)
    value = getattr(v, "value", None)  # ctypes scalars (c_uint32(5), c_size_t(...))
    if type(value) in (int, float, bool):
        return value
    return None


def number(v: Any) -> Any:
    """Capture: an output recorded when it is a number."""
    value = scalar(v)
    return None if isinstance(value, str) else value


def dim3_list(v: Any) -> list[int]:
    """Capture: a dim3 (object, tuple or int) as ``[x, y, z]``."""
    if v is None:
        return [1, 1, 1]
    if isinstance(v, (tuple, list)):
        return [int(x) for x in v] + [1] * (3 - len(v))
    if isinstance(v, int):
        return [v, 1, 1]
    return [int(getattr(v, "x", 1)), int(getattr(v, "y", 1)), int(getattr(v, "z", 1))]


def brief(v: Any) -> str:
    """A recorded value short enough for a refusal message."""
    text = repr(v)
    return text if len(text) <= 40 else f"{text[:37]}..."


def bad(reason: str) -> EventRefused:
    return EventRefused(reason, category="bad_record")


def check_address(v: Any, what: str) -> int:
    """Replay: an address or handle value, an integer from 0 to 2^64 - 1."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v < _U64:
        raise bad(f"{what} is {brief(v)}, not a 64-bit address")
    return v


def check_size(v: Any, what: str) -> int:
    """Replay: a byte count, an integer from 0 to 2^63 - 1 (never a float, inf, NaN or negative)."""
    if not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= MAX_SIZE:
        raise bad(f"{what} is {brief(v)}, not a byte count")
    return v


def check_scalar(v: Any, what: str) -> Any:
    """Replay: a scalar argument, None, a bool, a 64-bit integer or a finite float."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        if -(1 << 63) <= v < _U64:
            return v
    elif isinstance(v, float):
        if math.isfinite(v) and abs(v) < _U64:
            return v
    raise bad(f"parameter {what} is {brief(v)}, not a number replay can pass")


def check_record(v: Any, n: int, what: str) -> Sequence:
    """Replay: a structure recorded as a list of ``n`` fields (``what`` names it in the refusal)."""
    if not (isinstance(v, (list, tuple)) and len(v) == n):
        raise bad(f"{what} record is malformed")
    return v


def check_triple(v: Any) -> tuple[int, int, int]:
    """Replay: a launch shape, three integers below 2^32."""
    if not (isinstance(v, (list, tuple)) and len(v) == 3 and all(
            isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 1 << 32 for x in v)):
        raise bad("a launch shape is malformed")
    return int(v[0]), int(v[1]), int(v[2])


def byte_counts(row: Api) -> frozenset[str]:
    """The parameters of ``row`` that are byte counts: named as the size of a buffer,
    an allocation or a launch's shared memory."""
    named = {p.size for p in row.params if p.size} | {o.size for o in row.outs if o.size}
    named.update(n for p in row.params if p.rows for n in p.rows)
    if row.launch is not None:
        named.add(row.launch.shared)
    return frozenset(p.name for p in row.params if p.name in named)


def check_fits(alloc: Any, addr: int, n: int) -> None:
    """Replay: ``n`` bytes at capture address ``addr`` lie inside ``alloc``."""
    if alloc is None or addr < alloc.capture_base or addr + n > alloc.capture_base + alloc.size:
        size = f"{alloc.size}-byte " if alloc is not None else ""
        raise EventRefused(f"{n} bytes at 0x{addr:x} run past the end of their {size}allocation",
                           category="bounds")


def _translate(rep: ReplayServices, addr: int, what: str) -> int | None:
    if not addr:
        return None
    replay = rep.translate(addr)
    if replay is None:
        raise EventRefused(f"{what}: 0x{addr:x} is not inside any allocation replay made",
                           category="untranslated")
    return replay


def _null(n: int, what: str) -> None:
    """A NULL endpoint is passed on (the backend reports it) only when it moves nothing."""
    if n:
        raise EventRefused(f"{what}: a NULL address for {n} bytes", category="untranslated")
    return None


def _payload(rep: ReplayServices, blob: str | None, n: int) -> bytes | None:
    if blob is None:
        return None
    data = rep.read_blob(blob)
    if len(data) != n:
        raise EventRefused(f"blob {blob} holds {len(data)} bytes, the copy moves {n}", category="blob")
    return data


def _writer(addr: int, data: bytes) -> Callable[[], None]:
    def write() -> None:
        ctypes.memmove(addr, data, len(data))
    return write


def _reader(rep: ReplayServices, alloc: Any, addr: int, replay: int, n: int) -> Callable[[], bytes]:
    """Reads a checked destination when its check comes, never after it was released."""
    def read() -> bytes:
        if rep.find(addr) is not alloc:
            raise EventRefused(f"the destination at 0x{addr:x} was released before its check",
                               category="bounds")
        return ctypes.string_at(replay, n)
    return read


def _makes_graph_node(row: Api) -> bool:
    """A call that puts its work into a graph node: the node's host buffers are used at
    every launch of the graph, so replay keeps them for good, not for the call."""
    return any(o.role == "handle" and o.kind == "graph_node" for o in row.outs)


def _first(row: Api, role: str, kind: str | None = None) -> int | None:
    """The index of ``row``'s first parameter of ``role`` (and ``kind``), or None."""
    for i, p in enumerate(row.params):
        if p.role == role and kind in (None, p.kind):
            return i
    return None


def _extent(row: Api, i: int) -> Callable[[list], int]:
    """The bytes parameter ``i`` reaches, from the call's checked values: its ``rows``
    (a strided region), ``size`` times ``elem``, or its fixed ``span``."""
    p = row.params[i]
    if p.rows is not None:
        pitch_at, width_at, height_at = (row.param_index(n) for n in p.rows)
        region = p.extent
        return lambda raw: region(raw[pitch_at], raw[width_at], raw[height_at])
    if p.size is not None:
        size_at, elem = row.param_index(p.size), p.elem
        return lambda raw: raw[size_at] * elem
    span = p.span or 0
    return lambda raw: span


def gather_rows(addr: int, pitch: int, width: int, height: int) -> bytes:
    """The ``height`` rows of ``width`` bytes, ``pitch`` apart, at ``addr``, packed."""
    if pitch == width:
        return ctypes.string_at(addr, width * height)
    return b"".join(ctypes.string_at(addr + r * pitch, width) for r in range(height))


def scatter_rows(addr: int, pitch: int, width: int, height: int, data: bytes) -> None:
    """Write packed rows (``gather_rows``' form) back to a strided region at ``addr``."""
    for r in range(height):
        ctypes.memmove(addr + r * pitch, data[r * width:(r + 1) * width], width)




def _text(v: Any) -> str:
    return v.decode(errors="replace") if isinstance(v, (bytes, bytearray)) else str(v)




def _digest(data: bytes) -> str:
    return xxhash.xxh3_128_hexdigest(data)


# ------------------------------------------------------------------ parameter roles
# ------------------------------------------------------------------ what other layers ask a role
class WireType(NamedTuple):
    """What capture writes for a parameter of a role: ``ok(value)`` says whether a recorded
    value is of that type (the codec's schema check), ``description`` names it in a refusal."""

    ok: Callable[[object], bool]
    description: str


def is_int(v: object) -> bool:
    """A record integer (bool is not one)."""
    return type(v) is int


def finite_scalar(v: object) -> bool:
    """None, a bool, an int, a string or a finite float."""
    return v is None or type(v) in (bool, int, str) or (type(v) is float and math.isfinite(v))


def int_list(n: int | None) -> Callable[[object], bool]:
    """``ok(v)``: a list of ints (``n`` of them, when given)."""
    return lambda v: type(v) is list and (n is None or len(v) == n) and all(type(x) is int for x in v)


#: Names the capture wrapper's inline encoders (``Role.inline``, ``OutRole.inline``) use.
INLINE_NAMESPACE: dict[str, Any] = {}   # filled below, once the helpers exist


class Conversions(Protocol):
    """How a backend's surface converts an argument (``Role.convert`` picks one)."""

    def address(self, v: Any) -> Any:
        """An address argument as an int."""

    def dim3(self, v: Any) -> Any:
        """A dim3 argument as ``(x, y, z)``."""

    def handle(self, kind: str) -> Callable[[Any], Any]:
        """The converter of a handle argument of ``kind``."""

    def enum(self, kind: str) -> Callable[[Any], Any]:
        """The converter of an enum argument of ``kind``."""


class View(Protocol):
    """A reader's rendering of recorded argument values (``hrr dump``, ``hrr diff``): the
    role of each parameter picks the method (``Role.show``)."""

    def plain(self, v: Any) -> Any:
        """A value shown as it is."""

    def address(self, v: Any) -> Any:
        """An address in memory HIP allocated or the app owns."""

    def app_address(self, v: Any) -> Any:
        """An address in the application's own code or data (never the same twice)."""

    def handle(self, v: Any, kind: str) -> Any:
        """A handle value of ``kind``."""

    def endpoint(self, v: Any) -> Any:
        """A copy endpoint ``[tag, addr, nbytes, blob]``."""

    def enum(self, v: Any, kind: str | None) -> Any:
        """A value of the enum ``kind``."""

    def text(self, v: Any) -> Any:
        """A name (a string, or bytes from an older record)."""

    def nothing(self, v: Any) -> Any:
        """A parameter whose value means nothing (recorded as null)."""


class OutView(Protocol):
    """A reader's rendering of recorded outputs (``OutRole.show``)."""

    def out_plain(self, v: Any) -> Any:
        """An output shown as it is."""

    def new_allocation(self, v: Any, size: Any) -> Any:
        """The base of a new allocation of ``size`` bytes (None: unknown)."""

    def new_alias(self, v: Any, host: Any) -> Any:
        """A device address of the host allocation holding ``host``."""

    def new_handle(self, v: Any, kind: str) -> Any:
        """A new handle of ``kind``."""


class Role:
    """A parameter role: every fact about its kind of value. Capture: ``encoder`` and
    ``after_call`` (``inline``: the encoder as an expression the wrapper writes in place);
    the wire: ``wire``; the surface: ``convert``; replay: ``check`` and ``action``; readers:
    ``show``. The class facts below are what the other layers ask instead of its name."""

    name: ClassVar[str] = ""
    deferred: ClassVar[bool] = False   # capture: the wire value is known only after the call
    #: What capture writes for it (None: any wire value; replay's ``check`` goes deeper).
    wire: ClassVar[WireType | None] = None
    #: The encoder as an expression of the argument ``{v}`` (names: ``INLINE_NAMESPACE``),
    #: equal to ``encoder(row, i, cap)(args)`` (a test checks each); None: call the encoder.
    inline: ClassVar[str | None] = None
    #: An address the backend's surface takes as an int (``Conversions.address``).
    is_address: ClassVar[bool] = False
    #: One handle value of ``Param.kind`` (readers number handles by kind).
    names_handle: ClassVar[bool] = False
    #: A copy's endpoint ``[tag, addr, nbytes, blob]`` (its blob holds the bytes copied).
    copy_endpoint: ClassVar[bool] = False
    #: Recorded as null: a launch's arguments, which live in ``extra.launch``.
    in_launch_extra: ClassVar[bool] = False
    #: The name of a code object the archive stores (readers find kernel signatures in it).
    names_code_object: ClassVar[bool] = False

    def convert(self, p: Param, conv: Conversions) -> Callable[[Any], Any] | None:
        """The surface's conversion of an argument of this role (None: passed as given)."""
        return conv.address if self.is_address else None

    def show(self, view: View, p: Param, v: Any) -> Any:
        """``v``, a recorded value of parameter ``p``, as ``view`` renders values of this role."""
        return view.plain(v)

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        """``enc(args) -> wire value``; with ``deferred``, possibly a callable of the result."""
        return lambda a: None

    def after_call(self, row: Api, i: int, cap: CaptureServices) -> After | None:
        """Session bookkeeping once the call returned and was recorded (None: none)."""
        return None

    def check(self, row: Api, i: int) -> Check:
        """Replay: validates the recorded value; returns what later stages may trust."""
        return lambda v: None

    def action(self, row: Api, i: int, rep: ReplayServices) -> Action | None:
        """Replay: what the backend is given (None: the checked value itself)."""
        return None


# ------------------------------------------------------------------ output roles
OutBinder = Callable[[Call, Any, Any, int], int]   # (call, capture value, replay value, charged) -> charge left



class AddressRole(Role):
    """A role whose value is an address: recorded as an int (0 for anything not pointer-like),
    checked as one. Subclasses say how replay acts on it and how readers show it."""

    wire = WireType(is_int, "an address (int)")
    is_address = True

    def encoder(self, row: Api, i: int, cap: CaptureServices) -> Encoder:
        return lambda a: address_or_zero(a[i])

    def check(self, row: Api, i: int) -> Check:
        what = row.params[i].name
        return lambda v: check_address(v, what)

class OutRole:
    """An output role. Capture: ``encoder``, ``enricher``, ``after_call``; replay:
    ``charger`` (host memory it will take) and ``binder`` (what replay remembers of it)."""

    name: ClassVar[str] = ""
    #: The encoder as an expression of the output ``{v}`` (``Role.inline``); None: call it.
    inline: ClassVar[str | None] = None
    #: One new handle of ``Out.kind``.
    names_handle: ClassVar[bool] = False

    def encoder(self, out: Out) -> Callable[[Any], Any]:
        """``enc(value) -> wire value``."""
        return number

    def show(self, view: OutView, row: Api, j: int, v: Any, args: Sequence) -> Any:
        """``v``, the recorded output ``j`` of a call of ``row`` that succeeded with the
        recorded ``args``, as ``view`` renders outputs of this role."""
        return view.out_plain(v)

    def enricher(self, row: Api, j: int, cap: CaptureServices) -> Enricher | None:
        """Adds to the record's extra before it is written (None: nothing)."""
        return None

    def after_call(self, row: Api, j: int, cap: CaptureServices) -> After | None:
        """Session bookkeeping once the call returned and was recorded (None: none)."""
        return None

    def charger(self, row: Api, j: int, rep: ReplayServices) -> Callable[[Call], int] | None:
        """Charges what the call will allocate before it runs; returns the bytes charged."""
        return None

    def binder(self, row: Api, j: int, rep: ReplayServices) -> OutBinder | None:
        """Remembers the output of a call that succeeded (None: nothing to remember)."""
        return None


INLINE_NAMESPACE.update(_scalar=scalar, _address=address_or_zero, _handle=handle_or_zero, _number=number,
                        _handles=frozenset(HANDLE_TYPES.values()))


# ------------------------------------------------------------------ the tables
PARAM_ROLES: dict[str, Role] = {}
OUT_ROLES: dict[str, OutRole] = {}
R = TypeVar("R", bound="type[Role] | type[OutRole]")


def register(cls: R) -> R:
    """Class decorator: the role class ``cls`` (a ``Role`` or an ``OutRole`` subclass) is the
    one catalogue rows name by its ``name``; a second class of the same name is refused."""
    table: dict[str, Any] = OUT_ROLES if issubclass(cls, OutRole) else PARAM_ROLES
    if not issubclass(cls, (Role, OutRole)) or not cls.name:
        raise TypeError(f"{cls.__name__} is not a named Role or OutRole")
    if cls.name in table:
        raise ValueError(f"a role called {cls.name!r} exists already ({type(table[cls.name]).__name__})")
    table[cls.name] = cls()
    return cls


def unregister(cls: type[Role] | type[OutRole]) -> None:
    """Take a role class added by ``register`` away again (a test's own role)."""
    table: dict[str, Any] = OUT_ROLES if issubclass(cls, OutRole) else PARAM_ROLES
    if isinstance(table.get(cls.name), cls):
        del table[cls.name]
