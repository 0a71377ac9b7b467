/* The native kernel worker: a static executable that runs kernel images over the sim's
 * memory (worker.py builds it and is its client).
 *
 * It is exec'd with an empty environment and argv {"hrr-kernel-worker"}, so nothing of the
 * program or of the user who runs it is in its memory: its libc and libm are its own,
 * statically linked, and their data hold only what this process made. Descriptors at start:
 *   0, 1  /dev/null            2  a pipe for errors before the loop (then /dev/null)
 *   3     commands (read)      4  replies (write)
 *   5     the device arena     6  the pinned arena (absent when not shared)
 *   7     host windows (absent when there are none)
 * It reads a setup message from 3 (struct setup, then the windows), binds its life to its
 * parent's (PR_SET_PDEATHSIG), maps the arenas at the sim's addresses and the windows at
 * the program's, maps the private ranges it is given over device memory as its own zeroed
 * memory (the state of a kernel image's runtime and its __shared__ variables, when a launch
 * is spread over several workers), closes every other descriptor, builds the services block (then read-only),
 * installs fault handlers and, sandboxed, enters seccomp strict mode: from there only read,
 * write, exit and rt_sigreturn are allowed, so the loop uses nothing but those (raw system
 * calls) and memory made before it started. Protocol (native byte order) in worker.py. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <math.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "hrr_abi.h"

#define MSG_SETUP 0x52524830u  /* the client's first message */
#define MSG_READY 0x52524831u  /* the loop runs: status 1 sandboxed, 0 not, -errno when it cannot */
#define MSG_DONE 0x52524832u   /* a launch returned: status, printf bytes, trap message */
#define MSG_FAULT 0x52524833u  /* a signal ended the worker: signo, code, address, ip */
#define SETUP_VERSION 2u
#define MAX_KERNARGS 4096
#define MAX_WINDOWS 1024
#define FD_CMD 3
#define FD_RES 4
#define FD_DEVICE 5
#define FD_PINNED 6
#define FD_WINDOWS 7
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

struct setup {              /* 104 bytes */
  uint32_t magic;
  uint32_t version;
  int64_t parent_pid;       /* the client: the worker ends unless it is still its parent */
  uint64_t sandbox;
  uint64_t device_base, device_size;
  uint64_t pinned_base, pinned_size;
  uint64_t windows;         /* how many struct window follow */
  uint64_t printf_cap, max_fibers, stack_bytes, dyn_shared_cap;
  uint64_t privates;        /* how many struct window follow the windows (offset 0) */
};

struct window {             /* 24 bytes: fd 7's bytes [offset, offset + size) at address */
  uint64_t address, size, offset;
};

struct command {            /* 64 bytes */
  uint64_t launch_fn;
  uint64_t kernel;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dyn_shared;
  uint32_t nargs;
  uint64_t block_begin, block_end;   /* the blocks to run, in linear order (end 0: all) */
};

struct reply {              /* 16 bytes, then printf_len + trap_len bytes */
  uint32_t magic;
  int32_t status;
  uint32_t printf_len;
  uint32_t trap_len;
};

struct fault {              /* 32 bytes */
  uint32_t magic;
  int32_t signo;
  int32_t code;
  uint32_t reserved;
  uint64_t addr;
  uint64_t ip;
};

_Static_assert(sizeof(struct setup) == 104 && sizeof(struct window) == 24 && sizeof(struct command) == 64,
               "the protocol's sizes (worker.py packs the same)");

static unsigned char alt_stack[64 * 1024];
static unsigned char kernargs[MAX_KERNARGS] __attribute__((aligned(64)));
static struct window windows[MAX_WINDOWS];
static struct window privates[MAX_WINDOWS];

static long raw_write(int fd, const void *buf, size_t n) { return syscall(SYS_write, fd, buf, n); }
static long raw_read(int fd, void *buf, size_t n) { return syscall(SYS_read, fd, buf, n); }
static void raw_exit(int code) {
  for (;;) syscall(SYS_exit, code);   /* not exit_group: strict mode allows only exit */
}

/* Moves all n bytes (a read that meets the end of the pipe, or a write that moves
   nothing, fails the transfer). */
static int move_all(int fd, unsigned char *p, size_t n, int reading) {
  while (n) {
    long got = reading ? raw_read(fd, p, n) : raw_write(fd, p, n);
    if (got == 0) return -1;
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += got;
    n -= (size_t)got;
  }
  return 0;
}

static int write_all(int fd, const void *buf, size_t n) { return move_all(fd, (unsigned char *)buf, n, 0); }
static int read_all(int fd, void *buf, size_t n) { return move_all(fd, (unsigned char *)buf, n, 1); }

/* Before the loop: one line on stderr (the client's pipe), then exit with code. */
static int fail(const char *what, int err, int code) {
  char line[256];
  size_t n = 0;
  const char *head = "hrr kernel worker: ";
  const char *why = err ? strerror(err) : "";
  for (const char *s = head; *s && n < sizeof line - 1; ++s) line[n++] = *s;
  for (const char *s = what; *s && n < sizeof line - 1; ++s) line[n++] = *s;
  if (err && n < sizeof line - 3) { line[n++] = ':'; line[n++] = ' '; }
  for (const char *s = why; *s && n < sizeof line - 1; ++s) line[n++] = *s;
  line[n++] = '\n';
  write_all(2, line, n);
  return code;
}

static void on_fault(int signo, siginfo_t *info, void *context) {
  struct fault f;
  memset(&f, 0, sizeof f);
  f.magic = MSG_FAULT;
  f.signo = signo;
  f.code = info->si_code;
  f.addr = (uint64_t)(uintptr_t)info->si_addr;
#if defined(__x86_64__)
  f.ip = (uint64_t)((ucontext_t *)context)->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
  f.ip = (uint64_t)((ucontext_t *)context)->uc_mcontext.pc;
#else
  (void)context;
#endif
  write_all(FD_RES, &f, sizeof f);
  raw_exit(128 + signo);
}

static int install_faults(void) {
  static const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
  stack_t ss;
  struct sigaction sa;
  size_t i;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  if (sigaltstack(&ss, NULL) != 0) return errno;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (sigaction(signals[i], &sa, NULL) != 0) return errno;
  return 0;
}

static int map_at(uint64_t addr, uint64_t size, int prot, int fd, uint64_t offset) {
  void *got = mmap((void *)(uintptr_t)addr, size, prot, MAP_SHARED | MAP_NORESERVE | MAP_FIXED_NOREPLACE, fd,
                   (off_t)offset);
  if (got == MAP_FAILED) return errno;
  if ((uint64_t)(uintptr_t)got != addr) {   /* a kernel older than MAP_FIXED_NOREPLACE */
    munmap(got, size);
    return EEXIST;
  }
  return 0;
}

static void close_others(int keep_below) {
  struct rlimit rl;
  long fd, top;
  if (syscall(SYS_close_range, (unsigned)keep_below, ~0u, 0) == 0) return;
  top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1u << 20 ? (long)rl.rlim_cur : 1 << 16;
  for (fd = keep_below; fd < top; ++fd) close((int)fd);
}

/* The libm functions of the table: this executable's own (static), never the client's. */
#define HRR_MATH_ADDRESS(name, sig) (unsigned long long)(uintptr_t)&name,
static const unsigned long long math_addresses[HRR_MATH_COUNT] = {HRR_MATH_TABLE(HRR_MATH_ADDRESS)};

static uint64_t round_page(uint64_t n) { return (n + 4095) & ~(uint64_t)4095; }

/* The services block on a page of its own (read-only once filled); the buffers a launch
 * writes after it. */
static struct hrr_services *make_services(const struct setup *s, char **trap, uint64_t **printf_used) {
  uint64_t stacks_len = s->max_fibers * s->stack_bytes;
  uint64_t len = 4096 + 4096 + round_page(s->dyn_shared_cap) + round_page(s->printf_cap);
  char *stacks = mmap(NULL, stacks_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  char *area = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  struct hrr_services *svc = (struct hrr_services *)area;
  if (stacks == MAP_FAILED || area == MAP_FAILED) return NULL;
  *printf_used = (uint64_t *)(area + 4096);
  *trap = area + 4096 + 64;
  svc->abi_version = HRR_ABI_VERSION;
  svc->stacks = (uint64_t)(uintptr_t)stacks;
  svc->stack_bytes = s->stack_bytes;
  svc->max_fibers = s->max_fibers;
  svc->printf_used_at = (uint64_t)(uintptr_t)*printf_used;
  svc->trap_message = (uint64_t)(uintptr_t)*trap;
  svc->dyn_shared = (uint64_t)(uintptr_t)(area + 8192);
  svc->dyn_shared_cap = s->dyn_shared_cap;
  svc->printf_buf = (uint64_t)(uintptr_t)(area + 8192 + round_page(s->dyn_shared_cap));
  svc->printf_cap = s->printf_cap;
  memcpy(svc->math, math_addresses, sizeof math_addresses);
  if (mprotect(area, 4096, PROT_READ) != 0) return NULL;
  return svc;
}

static void serve(struct hrr_services *svc, char *trap, uint64_t *printf_used) {
  for (;;) {
    struct command c;
    struct hrr_launch launch;
    struct reply r;
    if (read_all(FD_CMD, &c, sizeof c) != 0) raw_exit(0);   /* the client went away */
    if (c.nargs > MAX_KERNARGS || read_all(FD_CMD, kernargs, c.nargs) != 0) raw_exit(2);
    *printf_used = 0;
    trap[0] = 0;
    memset(&launch, 0, sizeof launch);
    launch.kernel = c.kernel;
    launch.args = (unsigned long long)(uintptr_t)kernargs;
    memcpy(launch.grid, c.grid, sizeof launch.grid);
    memcpy(launch.block, c.block, sizeof launch.block);
    launch.dyn_shared_bytes = c.dyn_shared;
    launch.services = (unsigned long long)(uintptr_t)svc;
    launch.block_begin = c.block_begin;
    launch.block_end = c.block_end;
    memset(&r, 0, sizeof r);
    r.magic = MSG_DONE;
    r.status = ((int (*)(const struct hrr_launch *))(uintptr_t)c.launch_fn)(&launch);
    r.printf_len = (uint32_t)(*printf_used < svc->printf_cap ? *printf_used : svc->printf_cap);
    r.trap_len = (uint32_t)strnlen(trap, 255);
    if (write_all(FD_RES, &r, sizeof r) != 0 ||
        write_all(FD_RES, (const void *)(uintptr_t)svc->printf_buf, r.printf_len) != 0 ||
        write_all(FD_RES, trap, r.trap_len) != 0)
      raw_exit(1);
  }
}

int main(void) {
  struct setup s;
  struct reply ready;
  struct hrr_services *svc;
  char *trap;
  uint64_t *printf_used;
  uint64_t i;
  int err, null_fd;
  /* Bound to the client first: if it dies from here on, the kernel kills this process. */
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) return fail("PR_SET_PDEATHSIG", errno, 10);
  if (read_all(FD_CMD, &s, sizeof s) != 0 || s.magic != MSG_SETUP || s.version != SETUP_VERSION)
    return fail("no setup message from the client", 0, 11);
  if ((int64_t)getppid() != s.parent_pid) return fail("the client is gone", 0, 12);
  if (s.windows > MAX_WINDOWS || read_all(FD_CMD, windows, s.windows * sizeof windows[0]) != 0)
    return fail("bad host windows", 0, 11);
  if (s.privates > MAX_WINDOWS || read_all(FD_CMD, privates, s.privates * sizeof privates[0]) != 0)
    return fail("bad private ranges", 0, 11);
  if (s.max_fibers == 0 || s.max_fibers > 1024 || s.stack_bytes % 4096 || s.printf_cap > (1u << 26) ||
      s.dyn_shared_cap > (1u << 26))
    return fail("bad setup message", 0, 11);
  /* The program's windows first: the worker's own mappings then go around them. */
  for (i = 0; i < s.windows; ++i)
    if ((err = map_at(windows[i].address, windows[i].size, PROT_READ | PROT_WRITE, FD_WINDOWS, windows[i].offset)))
      return fail("cannot map registered host memory at the program's address", err, 13);
  if (s.device_size && (err = map_at(s.device_base, s.device_size, PROT_READ | PROT_WRITE | PROT_EXEC, FD_DEVICE, 0)))
    return fail("cannot map device memory", err, 13);
  if (s.pinned_size && (err = map_at(s.pinned_base, s.pinned_size, PROT_READ | PROT_WRITE, FD_PINNED, 0)))
    return fail("cannot map pinned memory", err, 13);
  for (i = 0; i < s.privates; ++i) {   /* over the device mapping: inside it, whole pages */
    uint64_t a = privates[i].address, n = privates[i].size;
    if (a % 4096 || n % 4096 || !n || a < s.device_base || a - s.device_base > s.device_size ||
        n > s.device_size - (a - s.device_base))
      return fail("a private range outside device memory", 0, 11);
    if (mmap((void *)(uintptr_t)a, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
        MAP_FAILED)
      return fail("cannot map a private range", errno, 13);
  }
  close_others(FD_DEVICE);
  svc = make_services(&s, &trap, &printf_used);
  if (!svc) return fail("cannot make the services block", errno, 14);
  if ((err = install_faults())) return fail("cannot install fault handlers", err, 3);
  /* A kernel could otherwise fill the client's stderr pipe and block. */
  null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null_fd < 0 || dup2(null_fd, 2) < 0) close(2);
  if (null_fd > 2) close(null_fd);
  memset(&ready, 0, sizeof ready);
  ready.magic = MSG_READY;
  ready.status = 0;
  if (s.sandbox) {
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) {
      ready.status = -errno;
      write_all(FD_RES, &ready, sizeof ready);
      return 4;
    }
    ready.status = 1;
  }
  if (write_all(FD_RES, &ready, sizeof ready) != 0) raw_exit(1);
  serve(svc, trap, printf_used);
  return 0;
}
