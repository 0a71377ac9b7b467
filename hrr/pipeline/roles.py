"""Roles as the plugin API names them, and where a catalogue row holds a value of one.

A plugin finds an argument or an output by meaning, never by API name: by its role (a
role class, reached through ``Roles``) and, for handles and enums, its kind. The role
classes live in :mod:`hrr.api.roles`; ``Roles`` only gives the plugin API one stable name
for each, so a plugin imports ``hrr.pipeline`` alone and never spells a role as a string.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, final

from hrr.api.roles import OUT_ROLES, PARAM_ROLES, OutRole, Role
from hrr.api.roles.addresses import CopyDst, CopySrc, Handle, HostRange, Ptr
from hrr.api.roles.code import Code, Options, RtcOut, Source
from hrr.api.roles.graphs import Handles, HostNode, InstantiateParams, KernelNode, MemsetNode
from hrr.api.roles.outputs import AliasOut, AllocOut, HandleOut, HandlesOut, ImageOut, TextOut, ValueOut
from hrr.api.roles.pools import AttrValue, PoolProps, Words
from hrr.api.roles.scalars import Dim3, Enum, HostFn, Ignored, Launch, Name, ResultBuf, UserData, Value
from hrr.api.roles.strided import Strided

if TYPE_CHECKING:
    from hrr.api.catalogue import Api


@final
class Roles:
    """Every role of the catalogue, by class: a parameter role (``Param.role``) under its
    class name, an output role (``Out.role``) under its class name ending in ``Out``
    (``Roles.Handle`` is a handle argument, ``Roles.HandleOut`` a handle the call returns).
    Pass them to ``param_at``, ``param_positions`` and ``result_at``; ``role.name`` is the
    name catalogue rows give it. A namespace, never instantiated."""

    # parameter roles
    Value = Value
    Enum = Enum
    Name = Name
    Dim3 = Dim3
    HostFn = HostFn
    UserData = UserData
    Launch = Launch
    Ignored = Ignored
    ResultBuf = ResultBuf
    Ptr = Ptr
    Handle = Handle
    CopySrc = CopySrc
    CopyDst = CopyDst
    HostRange = HostRange
    Strided = Strided
    Code = Code
    Source = Source
    Options = Options
    RtcOut = RtcOut
    Handles = Handles
    KernelNode = KernelNode
    MemsetNode = MemsetNode
    HostNode = HostNode
    InstantiateParams = InstantiateParams
    Words = Words
    AttrValue = AttrValue
    PoolProps = PoolProps
    # output roles
    ValueOut = ValueOut
    TextOut = TextOut
    ImageOut = ImageOut
    AllocOut = AllocOut
    AliasOut = AliasOut
    HandleOut = HandleOut
    HandlesOut = HandlesOut

    def __init__(self) -> None:
        raise TypeError("Roles is a namespace of role classes; use Roles.Handle, Roles.AllocOut, ...")


# The names above are what mypy checks plugins against; a role hrr's roles package gains
# later is offered as well, by its class name, so adding a role touches only its own module.
for _role in (*PARAM_ROLES.values(), *OUT_ROLES.values()):
    if type(_role).__module__.startswith("hrr.api.roles."):
        setattr(Roles, type(_role).__name__, type(_role))


def _role_name(role: type[Role] | type[OutRole] | str, want: type, where: str) -> str:
    """The name rows give ``role``: a class of the ``want`` side, or (for plugins written
    before role classes were part of this API) the name itself, accepted as given."""
    if isinstance(role, str):
        return role
    if isinstance(role, type) and issubclass(role, want) and role.name:
        return role.name
    raise TypeError(f"{where} takes a {want.__name__} class (hrr.pipeline.Roles), not {role!r}")


def param_positions(row: Api, role: type[Role] | str, kind: str | None = None) -> tuple[int, ...]:
    """Where every parameter of ``role`` (and handle or enum ``kind``, when given) sits in
    ``call.args`` and ``event.args``, in order; empty when the row has none."""
    name = _role_name(role, Role, "param_positions")
    return tuple(i for i, p in enumerate(row.params) if p.role == name and kind in (None, p.kind))


def param_at(row: Api, role: type[Role] | str, kind: str | None = None) -> int:
    """Where the row's first parameter of ``role`` (and handle or enum ``kind``, when
    given) sits in ``call.args`` and ``event.args``; KeyError names the row when none.
    Look it up once per row, when subscribing, not per call."""
    name = _role_name(role, Role, "param_at")
    for i, p in enumerate(row.params):
        if p.role == name and kind in (None, p.kind):
            return i
    raise KeyError(f"{row.name} has no {name} parameter" + (f" of kind {kind}" if kind else ""))


def result_at(row: Api, role: type[OutRole] | str, kind: str | None = None) -> int:
    """Where the row's first output of ``role`` (and ``kind``, when given) sits in the
    call's return tuple (the error code is at 0); KeyError names the row when none."""
    name = _role_name(role, OutRole, "result_at")
    for i, o in enumerate(row.outs):
        if o.role == name and kind in (None, o.kind):
            return 1 + i
    raise KeyError(f"{row.name} has no {name} output" + (f" of kind {kind}" if kind else ""))
