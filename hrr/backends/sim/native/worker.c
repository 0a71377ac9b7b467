/* The native kernel worker's loop (loaded by worker.py into the worker process).
 *
 * hrr_worker_install_faults: SIGSEGV/SIGBUS/SIGILL/SIGFPE handlers on an alternate stack
 * that report the fault on the result pipe and end the process.
 * hrr_worker_run: (sandbox) enter seccomp strict mode, say "ready", then run launches
 * read from the command pipe until it closes. After strict mode only read, write, exit
 * and rt_sigreturn are allowed, so the loop uses nothing but those (raw syscalls) and
 * memory made before it started. Protocol (native byte order) in worker.py. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "hrr_abi.h"

#define MSG_READY 0x52524831u  /* the loop runs (and the sandbox is on when asked) */
#define MSG_DONE 0x52524832u   /* a launch returned: status, printf bytes, trap message */
#define MSG_FAULT 0x52524833u  /* a signal ended the worker: signo, code, address, ip */
#define MAX_KERNARGS 4096

struct command {            /* 48 bytes */
  uint64_t launch_fn;
  uint64_t kernel;
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t dyn_shared;
  uint32_t nargs;
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

static int result_fd = -1;
static unsigned char alt_stack[64 * 1024];
static unsigned char kernargs[MAX_KERNARGS] __attribute__((aligned(64)));

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
  write_all(result_fd, &f, sizeof f);
  raw_exit(128 + signo);
}

int hrr_worker_install_faults(int fd) {
  static const int signals[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
  stack_t ss;
  struct sigaction sa;
  size_t i;
  result_fd = fd;
  memset(&ss, 0, sizeof ss);
  ss.ss_sp = alt_stack;
  ss.ss_size = sizeof alt_stack;
  if (sigaltstack(&ss, NULL) != 0) return -errno;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  for (i = 0; i < sizeof signals / sizeof signals[0]; i++)
    if (sigaction(signals[i], &sa, NULL) != 0) return -errno;
  return 0;
}

/* null_fd (when >= 0) replaces stderr first: a kernel could otherwise fill the client's
 * stderr pipe and block. */
int hrr_worker_run(int cmd_fd, int res_fd, uint64_t services_address, int sandbox, int null_fd) {
  struct hrr_services *svc = (struct hrr_services *)(uintptr_t)services_address;
  struct reply ready;
  result_fd = res_fd;
  if (null_fd >= 0 && dup2(null_fd, 2) < 0) return -errno;
  if (sandbox && prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) != 0) return -errno;
  memset(&ready, 0, sizeof ready);
  ready.magic = MSG_READY;
  ready.status = sandbox ? 1 : 0;
  if (write_all(res_fd, &ready, sizeof ready) != 0) raw_exit(1);
  for (;;) {
    struct command c;
    struct hrr_launch launch;
    struct reply r;
    const char *trap;
    if (read_all(cmd_fd, &c, sizeof c) != 0) raw_exit(0);   /* the client went away */
    trap = (const char *)(uintptr_t)svc->trap_message;
    if (c.nargs > MAX_KERNARGS || read_all(cmd_fd, kernargs, c.nargs) != 0) raw_exit(2);
    svc->printf_used = 0;
    ((char *)(uintptr_t)svc->trap_message)[0] = 0;
    memset(&launch, 0, sizeof launch);
    launch.kernel = c.kernel;
    launch.args = (unsigned long long)(uintptr_t)kernargs;
    memcpy(launch.grid, c.grid, sizeof launch.grid);
    memcpy(launch.block, c.block, sizeof launch.block);
    launch.dyn_shared_bytes = c.dyn_shared;
    launch.services = services_address;
    memset(&r, 0, sizeof r);
    r.magic = MSG_DONE;
    r.status = ((int (*)(const struct hrr_launch *))(uintptr_t)c.launch_fn)(&launch);
    r.printf_len = (uint32_t)(svc->printf_used < svc->printf_cap ? svc->printf_used : svc->printf_cap);
    r.trap_len = (uint32_t)strnlen(trap, 255);
    if (write_all(res_fd, &r, sizeof r) != 0 ||
        write_all(res_fd, (const void *)(uintptr_t)svc->printf_buf, r.printf_len) != 0 ||
        write_all(res_fd, trap, r.trap_len) != 0)
      raw_exit(1);
  }
}
