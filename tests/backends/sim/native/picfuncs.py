"""Tiny position-independent launch functions for the worker's tests, built without the
kernel toolchain: C compiled with -ffunction-sections, each function's code taken from
its own ``.text.NAME`` section (no relocations: no calls, globals or string literals)."""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

from hrr.backends.sim.native import worker

SOURCE = r"""
#include "hrr_abi.h"
typedef unsigned long long u64;

/* kernargs: u64 pointer; writes grid/block/kernel there, returns 0 */
int write_shape(const struct hrr_launch *L) {
  unsigned *p = *(unsigned *const *)L->args;
  p[0] = L->grid[0] * 1000 + L->block[0];
  p[1] = (unsigned)L->kernel;
  p[2] = L->dyn_shared_bytes;
  return 0;
}

/* kernargs: u64 pointer p, u32 value; *p += value; returns the old value */
int add_to(const struct hrr_launch *L) {
  volatile unsigned *p = *(unsigned *const *)L->args;
  unsigned v = *(const unsigned *)((const char *)L->args + 8);
  unsigned old = *p;
  *p = old + v;
  return (int)old;
}

/* kernargs: u64 address to store to */
int store_at(const struct hrr_launch *L) {
  *(volatile unsigned *)(*(const u64 *)L->args) = 1;
  return 0;
}

/* kernargs: u32 divisor */
int divide(const struct hrr_launch *L) {
  volatile int d = *(const int *)L->args;
  volatile int n = 7;
  return n / d;
}

/* printf output "hi N\n" for N = grid x, and a trap message "no!" with status 3 */
int say(const struct hrr_launch *L) {
  struct hrr_services *s = (struct hrr_services *)L->services;
  volatile unsigned long long *used = (unsigned long long *)s->printf_used_at;
  volatile char *out = (char *)s->printf_buf + *used;
  volatile char *trap = (char *)s->trap_message;
  out[0] = 'h'; out[1] = 'i'; out[2] = ' '; out[3] = (char)('0' + L->grid[0]); out[4] = '\n';
  *used += 5;
  trap[0] = 'n'; trap[1] = 'o'; trap[2] = '!'; trap[3] = 0;
  return 3;
}

/* a raw system call: getpid (x86_64) */
int raw_getpid(const struct hrr_launch *L) {
  long r;
  (void)L;
  __asm__ volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory");
  return r > 0 ? 7 : 8;
}

/* open(path in kernargs, O_RDONLY) through a raw system call (x86_64): the fd, or -errno */
int raw_open(const struct hrr_launch *L) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(2L), "D"(*(const u64 *)L->args), "S"(0L) : "rcx", "r11", "memory");
  return (int)r;
}

/* write(fd, addr, len) through a raw system call (allowed in strict mode); kernargs: u64 x 3 */
int raw_write(const struct hrr_launch *L) {
  const u64 *a = (const u64 *)L->args;
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(1L), "D"(a[0]), "S"(a[1]), "d"(a[2]) : "rcx", "r11", "memory");
  return (int)r;
}

/* writes a DONE reply with no output on the reply pipe itself (descriptor 4), then spins */
int forge_done(const struct hrr_launch *L) {
  volatile unsigned r[4];
  long ret;
  (void)L;
  r[0] = 0x52524832u; r[1] = 0; r[2] = 0; r[3] = 0;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(1L), "D"(4L), "S"(r), "d"(16L) : "rcx", "r11", "memory");
  for (;;) __asm__ volatile("" ::: "memory");
  return 0;
}

int spin(const struct hrr_launch *L) {
  (void)L;
  for (;;) __asm__ volatile("" ::: "memory");
  return 0;
}
"""
NAMES = ("write_shape", "add_to", "store_at", "divide", "say", "raw_getpid", "raw_open", "raw_write", "forge_done",
         "spin")


def _sections(elf: bytes) -> dict[str, bytes]:
    """Section name -> bytes of a little-endian ELF64 relocatable object."""
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = elf[strtab[4]:strtab[4] + strtab[5]]
    out = {}
    for name_off, kind, _flags, _addr, offset, size, *_ in headers:
        name = names[name_off:names.index(b"\0", name_off)].decode()
        out[name] = elf[offset:offset + size] if kind != 8 else bytes(size)   # 8: NOBITS
    return out


def build() -> dict[str, bytes]:
    """Each function's machine code, by name."""
    argv = [shutil.which("cc")] if shutil.which("cc") else worker.compilers()[0]
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = Path(tmp, "f.c"), Path(tmp, "f.o")
        src.write_text(SOURCE)
        include = Path(worker.__file__).parent
        subprocess.run([*argv, "-x", "c", "-O2", "-fPIC", "-ffreestanding", "-fno-stack-protector",
                        "-fcf-protection=none", "-ffunction-sections", "-fno-asynchronous-unwind-tables",
                        "-I", str(include), "-c", str(src), "-o", str(obj)], check=True, capture_output=True)
        sections = _sections(obj.read_bytes())
    for name in NAMES:
        assert f".rela.text.{name}" not in sections, f"{name} needs relocations"
    return {name: sections[f".text.{name}"] for name in NAMES}
