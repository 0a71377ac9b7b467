/* The runtime linked into every native kernel image (compiled as C++ with -DHRR_RUNTIME
 * -fno-builtin, hrr_device.h force-included): the fiber scheduler __hrr_launch, printf's own
 * formatter, the libm table's wrappers, memcpy & co. It links nothing: whatever it needs
 * from the outside comes through struct hrr_services. */

#define HRR_HIDDEN __attribute__((visibility("hidden")))
/* Everything a launch changes lies in the image's private pages (HRR_PRIVATE_SECTION, linked
 * after all else, page-aligned): a launch spread over several workers runs one scheduler per
 * worker, and each worker maps those pages as its own (zeroed) memory. */
#define HRR_STATE __attribute__((section(HRR_PRIVATE_SECTION)))

extern "C" {
HRR_HIDDEN HRR_STATE uint3 threadIdx;
HRR_HIDDEN HRR_STATE uint3 blockIdx;
HRR_HIDDEN HRR_STATE dim3 blockDim;
HRR_HIDDEN HRR_STATE dim3 gridDim;
HRR_HIDDEN HRR_STATE unsigned char *__hrr_dynshared;
}

namespace {

/* A waiting fiber waits at the block's barrier (__syncthreads) or at its warp's (a warp
 * operation: shuffle, vote). */
enum { READY = 0, AT_BLOCK = 1, AT_WARP = 2, DONE = 3 };
enum { MAX_FIBERS = 1024, WARP = HRR_WAVEFRONT_SIZE };   /* the image's wavefront size (hrr_device.h) */

struct Fiber {
  void *sp;
  unsigned stack;  /* index of the services stack it runs on */
  int state;
  unsigned warp_ops;  /* warp operations done so far: which exchange buffer the next one uses */
};

HRR_STATE hrr_services *svc;
HRR_STATE const hrr_launch *cur_launch;
HRR_STATE Fiber fibers[MAX_FIBERS];
HRR_STATE unsigned free_stacks[MAX_FIBERS];
HRR_STATE unsigned n_free;
HRR_STATE unsigned cur;
HRR_STATE void *sched_sp;
HRR_STATE int trapped;
HRR_STATE unsigned sync_counts[2];
HRR_STATE unsigned block_barriers;     /* block barriers released so far in this block */
/* A warp operation's values, by thread; two buffers, so that a thread may deposit for its next
 * operation while others of its warp still read the last one. stamp says which operation. */
HRR_STATE unsigned long long warp_values[2][MAX_FIBERS];
HRR_STATE unsigned warp_stamps[2][MAX_FIBERS];
HRR_STATE unsigned long long clock_ticks;

}  // namespace

/* __hrr_switch(save, to): store the current stack pointer (after pushing the callee-saved
 * registers) in *save, switch to the stack `to` and pop the registers saved there. */
extern "C" void __hrr_switch(void **save, void *to);
#if defined(__x86_64__)
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".hidden __hrr_switch\n"
    ".globl __hrr_switch\n"
    ".type __hrr_switch,@function\n"
    "__hrr_switch:\n"
    "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
    "  ret\n"
    ".size __hrr_switch, .-__hrr_switch\n");
enum { FRAME_WORDS = 8, FRAME_RET = 6 };
#elif defined(__aarch64__)
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".hidden __hrr_switch\n"
    ".globl __hrr_switch\n"
    ".type __hrr_switch,%function\n"
    "__hrr_switch:\n"
    "  sub sp, sp, #160\n"
    "  stp x19, x20, [sp, #0]\n  stp x21, x22, [sp, #16]\n  stp x23, x24, [sp, #32]\n"
    "  stp x25, x26, [sp, #48]\n  stp x27, x28, [sp, #64]\n  stp x29, x30, [sp, #80]\n"
    "  stp d8, d9, [sp, #96]\n  stp d10, d11, [sp, #112]\n  stp d12, d13, [sp, #128]\n"
    "  stp d14, d15, [sp, #144]\n"
    "  mov x9, sp\n  str x9, [x0]\n  mov sp, x1\n"
    "  ldp x19, x20, [sp, #0]\n  ldp x21, x22, [sp, #16]\n  ldp x23, x24, [sp, #32]\n"
    "  ldp x25, x26, [sp, #48]\n  ldp x27, x28, [sp, #64]\n  ldp x29, x30, [sp, #80]\n"
    "  ldp d8, d9, [sp, #96]\n  ldp d10, d11, [sp, #112]\n  ldp d12, d13, [sp, #128]\n"
    "  ldp d14, d15, [sp, #144]\n"
    "  add sp, sp, #160\n"
    "  ret\n"
    ".size __hrr_switch, .-__hrr_switch\n");
enum { FRAME_WORDS = 20, FRAME_RET = 11 };
#else
#error "native kernels need x86_64 or aarch64"
#endif

namespace {

/* The lowest word of every fiber stack: a thread that came back to the scheduler with it
 * changed ran past its stack (into another thread's), so the launch stops there. */
const unsigned long long STACK_CANARY = 0x6872725f73746b21ULL;

/* Stack s lies at the top of the services area, downwards: the ones a launch uses first have
 * the others beneath them, so running past one lands in memory that is there (and is seen). */
char *stack_base(unsigned s) {
  return (char *)svc->stacks + (svc->max_fibers - 1 - s) * svc->stack_bytes;
}

unsigned long long *stack_bottom(unsigned s) { return (unsigned long long *)stack_base(s); }

void copy_message(const char *a, const char *b, const char *c);

void to_scheduler() {
  if (*stack_bottom(fibers[cur].stack) != STACK_CANARY && !trapped) {
    copy_message("a thread overflowed its stack (services.stack_bytes); the launch was stopped", 0, 0);
    trapped = 1;
  }
  __hrr_switch(&fibers[cur].sp, sched_sp);
}

/* A fiber's first frame returns here: run the kernel for this thread, then never come back. */
__attribute__((noreturn)) void fiber_main() {
  ((void (*)(const void *))cur_launch->kernel)((const void *)cur_launch->args);
  fibers[cur].state = DONE;
  free_stacks[n_free++] = fibers[cur].stack;
  to_scheduler();
  __builtin_unreachable();
}

void start_fiber(unsigned i) {
  unsigned s = free_stacks[--n_free];
  char *top = stack_base(s) + svc->stack_bytes;
  top = (char *)((unsigned long long)top & ~15ULL);
  void **frame = (void **)top - FRAME_WORDS;
  for (int k = 0; k < FRAME_WORDS; ++k) frame[k] = 0;
  frame[FRAME_RET] = (void *)&fiber_main;
  fibers[i].sp = frame;
  fibers[i].stack = s;
  *stack_bottom(s) = STACK_CANARY;
}

/* threadIdx of each thread of the launch's block shape (no divisions per switch). */
HRR_STATE uint3 thread_coords[MAX_FIBERS];

void set_coords(unsigned n) {
  unsigned x = 0, y = 0, z = 0;
  for (unsigned i = 0; i < n; ++i) {
    thread_coords[i].x = x; thread_coords[i].y = y; thread_coords[i].z = z;
    if (++x == blockDim.x) { x = 0; if (++y == blockDim.y) { y = 0; ++z; } }
  }
}

inline void set_thread(unsigned i) { threadIdx = thread_coords[i]; }

void copy_message(const char *a, const char *b, const char *c) {
  char *out = (char *)svc->trap_message;
  unsigned n = 0;
  const char *parts[3] = {a, b, c};
  for (int p = 0; p < 3; ++p)
    for (const char *s = parts[p]; s && *s && n < 255; ++s) out[n++] = *s;
  out[n] = 0;
}

/* Every ready thread runs until it waits or ends, in thread order. When a pass is over every
 * thread still running waits: a warp whose running threads all wait at a warp operation goes
 * on first; else, if every running thread waits at __syncthreads, the block barrier releases
 * (a thread that finished does not count); else the block cannot go on. */
int run_block(unsigned n) {
  for (unsigned i = 0; i < n; ++i) { fibers[i].state = READY; fibers[i].sp = 0; fibers[i].warp_ops = 0; }
  n_free = 0;
  for (unsigned s = n; s-- > 0;) free_stacks[n_free++] = s;
  block_barriers = 0;
  sync_counts[0] = 0;
  for (unsigned i = 0; i < n; ++i) warp_stamps[0][i] = warp_stamps[1][i] = 0;
  unsigned live = n;
  while (live) {
    for (unsigned i = 0; i < n; ++i) {
      if (fibers[i].state != READY) continue;
      if (!fibers[i].sp) start_fiber(i);
      cur = i;
      set_thread(i);
      __hrr_switch(&sched_sp, fibers[i].sp);
      if (trapped) return HRR_E_TRAP;
      if (fibers[i].state == DONE) --live;
    }
    if (!live) break;
    bool released = false;
    for (unsigned w = 0; w < n; w += WARP) {
      unsigned end = w + WARP < n ? w + WARP : n;
      bool any = false, all = true;
      for (unsigned i = w; i < end; ++i) {
        if (fibers[i].state == DONE) continue;
        any = true;
        if (fibers[i].state != AT_WARP) { all = false; break; }
      }
      if (any && all) {
        for (unsigned i = w; i < end; ++i)
          if (fibers[i].state == AT_WARP) fibers[i].state = READY;
        released = true;
      }
    }
    if (released) continue;
    for (unsigned i = 0; i < n; ++i)
      if (fibers[i].state == AT_WARP) {
        copy_message("threads wait at a warp operation while others of their warp wait at __syncthreads", 0, 0);
        return HRR_E_BARRIER;
      }
    ++block_barriers;
    sync_counts[block_barriers & 1] = 0;
    for (unsigned i = 0; i < n; ++i)
      if (fibers[i].state == AT_BLOCK) fibers[i].state = READY;
  }
  return HRR_OK;
}


}  // namespace

extern "C" HRR_HIDDEN void __hrr_syncthreads(void) {
  fibers[cur].state = AT_BLOCK;
  to_scheduler();
}

extern "C" HRR_HIDDEN int __hrr_syncthreads_count(int predicate) {
  unsigned slot = block_barriers & 1;
  sync_counts[slot] += predicate != 0;
  __hrr_syncthreads();
  return (int)sync_counts[slot];
}

namespace {
/* Deposit v for this warp operation and wait until every running thread of the warp has:
 * returns the operation's buffer index and stamp. */
unsigned warp_exchange(unsigned long long v, unsigned &stamp) {
  unsigned me = cur;
  stamp = ++fibers[me].warp_ops;
  unsigned b = stamp & 1;
  warp_values[b][me] = v;
  warp_stamps[b][me] = stamp;
  fibers[me].state = AT_WARP;
  to_scheduler();
  return b;
}
}  // namespace

/* The value src_lane of this thread's warp gave to the same operation (its own v when that
 * lane is not running). */
extern "C" HRR_HIDDEN unsigned long long __hrr_shfl(unsigned long long v, unsigned src_lane) {
  unsigned me = cur, stamp;
  unsigned b = warp_exchange(v, stamp);
  unsigned src = (me & ~(unsigned)(WARP - 1)) + (src_lane & (WARP - 1));
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  if (src < n && warp_stamps[b][src] == stamp) return warp_values[b][src];
  return v;
}

/* Bit lane set for every running lane of the warp whose predicate holds; *active: the running
 * lanes. */
extern "C" HRR_HIDDEN unsigned long long __hrr_vote(int predicate, unsigned long long *active) {
  unsigned me = cur, stamp;
  unsigned b = warp_exchange(predicate != 0, stamp);
  unsigned base = me & ~(unsigned)(WARP - 1);
  unsigned n = blockDim.x * blockDim.y * blockDim.z;
  unsigned long long ballot = 0, act = 0;
  for (unsigned l = 0; l < WARP && base + l < n; ++l)
    if (warp_stamps[b][base + l] == stamp) {
      act |= 1ULL << l;
      if (warp_values[b][base + l]) ballot |= 1ULL << l;
    }
  if (active) *active = act;
  return ballot;
}

extern "C" HRR_HIDDEN unsigned long long __hrr_clock64(void) { return ++clock_ticks; }

extern "C" HRR_HIDDEN __attribute__((noreturn)) void __hrr_trap(const char *message) {
  copy_message(message, 0, 0);
  trapped = 1;
  to_scheduler();
  __builtin_unreachable();
}

namespace {
void utoa(unsigned long long v, char *buf) {
  char tmp[24];
  int n = 0;
  do { tmp[n++] = (char)('0' + v % 10); v /= 10; } while (v);
  while (n) *buf++ = tmp[--n];
  *buf = 0;
}
}  // namespace

extern "C" HRR_HIDDEN __attribute__((noreturn)) void __hrr_assert_fail(const char *expr, const char *file,
                                                                     unsigned line, const char *func) {
  char where[300];
  unsigned n = 0;
  for (const char *s = file; *s && n < 200; ++s) where[n++] = *s;
  where[n++] = ':';
  utoa(line, where + n);
  while (where[n]) ++n;
  where[n++] = ':';
  where[n++] = ' ';
  for (const char *s = func; *s && n < 280; ++s) where[n++] = *s;
  where[n] = 0;
  copy_message(where, ": Assertion `", expr);
  char *out = (char *)svc->trap_message;
  unsigned m = 0;
  while (out[m]) ++m;
  const char *tail = "' failed.";
  for (const char *s = tail; *s && m < 255; ++s) out[m++] = *s;
  out[m] = 0;
  trapped = 1;
  to_scheduler();
  __builtin_unreachable();
}

extern "C" HRR_HIDDEN int __hrr_launch(const hrr_launch *launch) {
  svc = (hrr_services *)launch->services;
  if (svc->abi_version != HRR_ABI_VERSION) return HRR_E_ABI;
  unsigned long long n = (unsigned long long)launch->block[0] * launch->block[1] * launch->block[2];
  unsigned long long cap = svc->max_fibers < MAX_FIBERS ? svc->max_fibers : MAX_FIBERS;
  if (n > cap || launch->dyn_shared_bytes > svc->dyn_shared_cap) return HRR_E_SHAPE;
  if (n == 0 || launch->grid[0] == 0 || launch->grid[1] == 0 || launch->grid[2] == 0) return HRR_OK;
  cur_launch = launch;
  trapped = 0;
  gridDim = dim3(launch->grid[0], launch->grid[1], launch->grid[2]);
  blockDim = dim3(launch->block[0], launch->block[1], launch->block[2]);
  __hrr_dynshared = (unsigned char *)svc->dyn_shared;
  set_coords((unsigned)n);
  /* the blocks asked for, in linear order (x fastest): all of them, or a share of a launch
   * spread over several workers */
  unsigned long long blocks = (unsigned long long)gridDim.x * gridDim.y * gridDim.z;
  unsigned long long end = launch->block_end && launch->block_end < blocks ? launch->block_end : blocks;
  unsigned long long b = launch->block_begin;
  if (b >= end) return HRR_OK;
  unsigned x = (unsigned)(b % gridDim.x), y = (unsigned)(b / gridDim.x % gridDim.y),
           z = (unsigned)(b / gridDim.x / gridDim.y);
  for (; b < end; ++b) {
    blockIdx.x = x; blockIdx.y = y; blockIdx.z = z;
    int rc = run_block((unsigned)n);
    if (rc != HRR_OK) return rc;
    if (++x == gridDim.x) { x = 0; if (++y == gridDim.y) { y = 0; ++z; } }
  }
  return HRR_OK;
}

/* ---- memory functions (the compiler emits calls to them) ---- */
extern "C" HRR_HIDDEN void *memcpy(void *dst, const void *src, size_t n) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  for (; n >= 8; n -= 8, d += 8, s += 8) { unsigned long long w; __builtin_memcpy(&w, s, 8); __builtin_memcpy(d, &w, 8); }
  while (n--) *d++ = *s++;
  return dst;
}

extern "C" HRR_HIDDEN void *memmove(void *dst, const void *src, size_t n) {
  unsigned char *d = (unsigned char *)dst;
  const unsigned char *s = (const unsigned char *)src;
  if (d == s || n == 0) return dst;
  if (d < s || d >= s + n) {
    while (n--) *d++ = *s++;
  } else {
    d += n; s += n;
    while (n--) *--d = *--s;
  }
  return dst;
}

extern "C" HRR_HIDDEN void *memset(void *dst, int c, size_t n) {
  unsigned char *d = (unsigned char *)dst;
  while (n--) *d++ = (unsigned char)c;
  return dst;
}

extern "C" HRR_HIDDEN int memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
  for (; n; --n, ++x, ++y)
    if (*x != *y) return *x < *y ? -1 : 1;
  return 0;
}

extern "C" HRR_HIDDEN size_t strlen(const char *s) {
  size_t n = 0;
  while (s[n]) ++n;
  return n;
}

/* ---- libm through the services table ---- */
#define HRR_MATH_DEF_D1(name) extern "C" HRR_HIDDEN double name(double x) noexcept { return ((double (*)(double))svc->math[HRR_MATH_##name])(x); }
#define HRR_MATH_DEF_D2(name) extern "C" HRR_HIDDEN double name(double x, double y) noexcept { return ((double (*)(double, double))svc->math[HRR_MATH_##name])(x, y); }
#define HRR_MATH_DEF_F1(name) extern "C" HRR_HIDDEN float name(float x) noexcept { return ((float (*)(float))svc->math[HRR_MATH_##name])(x); }
#define HRR_MATH_DEF_F2(name) extern "C" HRR_HIDDEN float name(float x, float y) noexcept { return ((float (*)(float, float))svc->math[HRR_MATH_##name])(x, y); }
#define HRR_MATH_DEF(name, sig) HRR_MATH_DEF_##sig(name)
HRR_MATH_TABLE(HRR_MATH_DEF)

/* fma without an FMA instruction: float's product is exact in double; double's is split
 * (Dekker) so that only the final sum rounds twice. */
extern "C" HRR_HIDDEN float __hrr_fmaf(float a, float b, float c) { return (float)((double)a * b + c); }

extern "C" HRR_HIDDEN double __hrr_fma(double a, double b, double c) {
  if (!__builtin_isfinite(a) || !__builtin_isfinite(b) || !__builtin_isfinite(c)) return a * b + c;
  const double split = 134217729.0;
  double p = a * b;
  double ta = split * a, ah = ta - (ta - a), al = a - ah;
  double tb = split * b, bh = tb - (tb - b), bl = b - bh;
  double err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  double s = p + c;
  double bb = s - p;
  double serr = (p - (s - bb)) + (c - bb);
  return s + (serr + err);
}

/* ---- printf: formatted into the services buffer, one call's output kept whole ---- */
namespace {


struct Out {
  char *buf;
  unsigned cap, n;
  void put(char c) { if (n < cap) buf[n] = c; ++n; }
  void puts(const char *s, unsigned len) { for (unsigned i = 0; i < len; ++i) put(s[i]); }
  void pad(char c, int k) { while (k-- > 0) put(c); }
};

struct Spec {
  bool left, plus, space, alt, zero;
  int width, prec;
  char conv;
};

/* Emit body (with its sign/prefix) padded to the width as the flags say. */
void emit(Out &o, const Spec &sp, const char *prefix, const char *body, unsigned len, bool numeric) {
  unsigned plen = 0;
  while (prefix[plen]) ++plen;
  int padn = sp.width - (int)(plen + len);
  if (sp.left) {
    o.puts(prefix, plen); o.puts(body, len); o.pad(' ', padn);
  } else if (sp.zero && numeric) {
    o.puts(prefix, plen); o.pad('0', padn); o.puts(body, len);
  } else {
    o.pad(' ', padn); o.puts(prefix, plen); o.puts(body, len);
  }
}

void fmt_int(Out &o, Spec sp, unsigned long long v, bool neg, unsigned base, bool upper) {
  char digits[70];
  unsigned n = 0;
  const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  if (!(v == 0 && sp.prec == 0))
    do { digits[n++] = set[v % base]; v /= base; } while (v);
  char body[140];
  unsigned len = 0;
  int zeros = sp.prec > (int)n ? sp.prec - (int)n : 0;
  if (base == 8 && sp.alt && zeros == 0 && (n == 0 || digits[n - 1] != '0')) zeros = 1;
  for (int k = 0; k < zeros && len < 130; ++k) body[len++] = '0';
  while (n) body[len++] = digits[--n];
  const char *prefix = neg ? "-" : sp.plus ? "+" : sp.space ? " " : "";
  if (base == 16 && sp.alt && len && !(len == 1 && body[0] == '0')) prefix = upper ? "0X" : "0x";
  if (sp.prec >= 0) sp.zero = false;
  emit(o, sp, prefix, body, len, true);
}

/* Exact decimal digits of a double: it is m * 2^e, a finite decimal, so its integer part is
 * converted with a small bignum and its fraction produced digit by digit (times 10, take what
 * passes the binary point). Rounding at any precision is then exact: to nearest, ties to even,
 * as glibc's printf. */
struct Big {
  enum { LIMBS = 36 };   /* 1152 bits: an integer part (< 2^1024) or a fraction's numerator (< 2^1074) */
  unsigned w[LIMBS];
  unsigned n;
  void set(unsigned long long v) { n = 0; while (v) { w[n++] = (unsigned)v; v >>= 32; } }
  bool zero() const { return n == 0; }
  void trim() { while (n && !w[n - 1]) --n; }
  void shl(unsigned bits) {
    unsigned limbs = bits / 32, b = bits % 32;
    if (!n) return;
    unsigned m = n + limbs + 1;
    if (m > LIMBS) m = LIMBS;
    for (unsigned i = m; i-- > 0;) {
      unsigned long long hi = i >= limbs && i - limbs < n ? w[i - limbs] : 0;
      unsigned long long lo = i >= limbs + 1 && i - limbs - 1 < n ? w[i - limbs - 1] : 0;
      w[i] = b ? (unsigned)((hi << b) | (lo >> (32 - b))) : (unsigned)hi;
    }
    n = m;
    trim();
  }
  void mul10() {
    unsigned long long carry = 0;
    for (unsigned i = 0; i < n; ++i) { carry += (unsigned long long)w[i] * 10; w[i] = (unsigned)carry; carry >>= 32; }
    if (carry && n < LIMBS) w[n++] = (unsigned)carry;
  }
  unsigned divmod(unsigned d) {
    unsigned long long r = 0;
    for (unsigned i = n; i-- > 0;) { unsigned long long cur = (r << 32) | w[i]; w[i] = (unsigned)(cur / d); r = cur % d; }
    trim();
    return (unsigned)r;
  }
  /* this >> k (small), and keep only the k low bits */
  unsigned take_above(unsigned k) {
    unsigned limb = k / 32, b = k % 32;
    unsigned long long v = 0;
    if (limb < n) v = w[limb] >> b;
    if (b && limb + 1 < n) v |= (unsigned long long)w[limb + 1] << (32 - b);
    if (limb < n) {
      w[limb] &= b ? (1u << b) - 1 : 0;
      n = limb + 1;
      trim();
    }
    return (unsigned)v;
  }
};

struct Decimal {
  char ip[330];        /* integer part's digits, most significant first ("0" for none) */
  unsigned ilen;
  Big frac;            /* the fraction is frac / 2^k */
  unsigned k;

  explicit Decimal(double v) {
    unsigned long long bits;
    __builtin_memcpy(&bits, &v, 8);
    unsigned ex = (unsigned)(bits >> 52) & 0x7ff;
    unsigned long long m = bits & ((1ULL << 52) - 1);
    int e;
    if (ex) { m |= 1ULL << 52; e = (int)ex - 1075; } else { e = -1074; }
    Big ipart;
    if (e >= 0) {
      ipart.set(m); ipart.shl((unsigned)e);
      frac.set(0); k = 0;
    } else {
      k = (unsigned)-e;
      ipart.set(k < 64 ? m >> k : 0);
      frac.set(k < 64 ? m & ((1ULL << k) - 1) : m);
    }
    char rev[340];
    unsigned r = 0;
    while (!ipart.zero()) {
      unsigned chunk = ipart.divmod(1000000000u);
      for (int j = 0; j < 9; ++j) { rev[r++] = (char)('0' + chunk % 10); chunk /= 10; }
    }
    while (r > 1 && rev[r - 1] == '0') --r;
    if (r == 0) rev[r++] = '0';
    ilen = r;
    for (unsigned j = 0; j < r; ++j) ip[j] = rev[r - 1 - j];
  }
  int next_frac() { if (frac.zero()) return 0; frac.mul10(); return (int)frac.take_above(k); }
};

/* Round the digit string d[0..len) up by one unit in its last place; returns true when it grew
 * a digit (999 -> 1000: d then holds len + 1 digits). */
bool round_up(char *d, unsigned len) {
  for (unsigned i = len; i-- > 0;) {
    if (d[i] != '9') { ++d[i]; return false; }
    d[i] = '0';
  }
  for (unsigned i = len; i > 0; --i) d[i] = d[i - 1];
  d[0] = '1';
  return true;
}

bool rounds_up(int next, bool sticky, char last) { return next > 5 || (next == 5 && (sticky || ((last - '0') & 1))); }

/* |v| with prec digits after the point: digits into d (integer digits first); returns how many
 * are integer digits. */
unsigned fixed_digits(double v, int prec, char *d) {
  Decimal dec(v);
  unsigned n = dec.ilen;
  for (unsigned i = 0; i < n; ++i) d[i] = dec.ip[i];
  for (int i = 0; i < prec; ++i) d[n + i] = (char)('0' + dec.next_frac());
  int next = dec.next_frac();
  if (rounds_up(next, !dec.frac.zero(), d[n + prec - 1]) && round_up(d, n + prec)) ++n;
  return n;
}

/* v > 0 with 1 + prec significant digits: digits into d, decimal exponent into exp10. */
void sci_digits(double v, int prec, char *d, int &exp10) {
  Decimal dec(v);
  unsigned want = (unsigned)prec + 1, got = 0, i = 0;
  int e;
  bool whole = !(dec.ilen == 1 && dec.ip[0] == '0');
  if (whole) {
    e = (int)dec.ilen - 1;
    for (; i < dec.ilen && got < want; ++i) d[got++] = dec.ip[i];
  } else {
    int z = 0, digit;
    while ((digit = dec.next_frac()) == 0) ++z;
    e = -(z + 1);
    d[got++] = (char)('0' + digit);
  }
  while (got < want) d[got++] = (char)('0' + dec.next_frac());
  int next;
  bool sticky = false;
  if (whole && i < dec.ilen) {
    next = dec.ip[i++] - '0';
    for (; i < dec.ilen; ++i) sticky |= dec.ip[i] != '0';
    sticky |= !dec.frac.zero();
  } else {
    next = dec.next_frac();
    sticky = !dec.frac.zero();
  }
  if (rounds_up(next, sticky, d[want - 1]) && round_up(d, want)) ++e;   /* 9.99 -> 10.0: one digit too many, dropped */
  exp10 = e;
}

void fmt_float(Out &o, Spec sp, double dv) {
  bool upper = sp.conv == 'F' || sp.conv == 'E' || sp.conv == 'G';
  bool neg = __builtin_signbit(dv);
  const char *sign = neg ? "-" : sp.plus ? "+" : sp.space ? " " : "";
  if (__builtin_isnan(dv) || __builtin_isinf(dv)) {
    const char *t = __builtin_isnan(dv) ? (upper ? "NAN" : "nan") : (upper ? "INF" : "inf");
    sp.zero = false;
    emit(o, sp, sign, t, 3, true);
    return;
  }
  double v = neg ? -dv : dv;
  int prec = sp.prec < 0 ? 6 : sp.prec;
  if (prec > 400) prec = 400;
  char conv = (char)(sp.conv | 0x20);
  bool strip = false;
  char d[800];
  if (conv == 'g') {
    if (prec == 0) prec = 1;
    int e = 0;
    if (v != 0) sci_digits(v, prec - 1, d, e);
    if (e >= -4 && e < prec) { conv = 'f'; prec = prec - 1 - e; }
    else { conv = 'e'; prec = prec - 1; }
    strip = !sp.alt;
  }
  char body[1200];
  unsigned len = 0;
  if (conv == 'f') {
    unsigned ilen = fixed_digits(v, prec, d);
    for (unsigned k = 0; k < ilen; ++k) body[len++] = d[k];
    int flen = prec;
    if (strip) while (flen > 0 && d[ilen + flen - 1] == '0') --flen;
    if (flen > 0 || sp.alt) body[len++] = '.';
    for (int k = 0; k < flen; ++k) body[len++] = d[ilen + k];
  } else {
    int e = 0;
    if (v != 0) sci_digits(v, prec, d, e);
    else for (int k = 0; k <= prec; ++k) d[k] = '0';
    int flen = prec;
    if (strip) while (flen > 0 && d[flen] == '0') --flen;
    body[len++] = d[0];
    if (flen > 0 || sp.alt) body[len++] = '.';
    for (int k = 1; k <= flen; ++k) body[len++] = d[k];
    body[len++] = upper ? 'E' : 'e';
    body[len++] = e < 0 ? '-' : '+';
    unsigned ae = e < 0 ? -e : e;
    char t[8];
    utoa(ae, t);
    if (ae < 10) body[len++] = '0';
    for (char *c = t; *c; ++c) body[len++] = *c;
  }
  emit(o, sp, sign, body, len, true);
}

/* printf's arguments: a va_list (a call through the C declaration), or the typed array the
 * header's printf template makes (which knows each argument's type, as a GPU's printf does). */
struct Args {
  const __hrr_printf_arg *arr;
  unsigned n, i;
  __builtin_va_list *ap;
  const __hrr_printf_arg *take() { return i < n ? &arr[i++] : 0; }
  long long sint(int len) {
    if (!arr) return len >= 1 ? __builtin_va_arg(*ap, long long) : __builtin_va_arg(*ap, int);
    const __hrr_printf_arg *a = take();
    if (!a) return 0;
    if (a->kind == 2) { double d; __builtin_memcpy(&d, &a->bits, 8); return (long long)d; }
    return (long long)a->bits;
  }
  unsigned long long uint(int len) {
    if (!arr) return len >= 1 ? __builtin_va_arg(*ap, unsigned long long) : __builtin_va_arg(*ap, unsigned int);
    return (unsigned long long)sint(len);
  }
  double dbl() {
    if (!arr) return __builtin_va_arg(*ap, double);
    const __hrr_printf_arg *a = take();
    if (!a) return 0;
    if (a->kind == 2) { double d; __builtin_memcpy(&d, &a->bits, 8); return d; }
    return a->kind == 1 ? (double)a->bits : (double)(long long)a->bits;
  }
  const void *ptr() {
    if (!arr) return __builtin_va_arg(*ap, const void *);
    const __hrr_printf_arg *a = take();
    return a ? (const void *)a->bits : 0;
  }
};

int format(Out &o, const char *f, Args &args) {
  while (*f) {
    if (*f != '%') { o.put(*f++); continue; }
    ++f;
    Spec sp = {false, false, false, false, false, 0, -1, 0};
    for (;; ++f) {
      if (*f == '-') sp.left = true;
      else if (*f == '+') sp.plus = true;
      else if (*f == ' ') sp.space = true;
      else if (*f == '#') sp.alt = true;
      else if (*f == '0') sp.zero = true;
      else break;
    }
    if (*f == '*') {
      sp.width = (int)args.sint(0);
      if (sp.width < 0) { sp.left = true; sp.width = -sp.width; }
      ++f;
    } else {
      while (*f >= '0' && *f <= '9') sp.width = sp.width * 10 + (*f++ - '0');
    }
    if (*f == '.') {
      ++f;
      sp.prec = 0;
      if (*f == '*') { sp.prec = (int)args.sint(0); if (sp.prec < 0) sp.prec = -1; ++f; }
      else while (*f >= '0' && *f <= '9') sp.prec = sp.prec * 10 + (*f++ - '0');
    }
    if (sp.width > 4096) sp.width = 4096;
    int len = 0;  /* 0 int, -1 short, -2 char, 1 long, 2 long long, 3 size_t/ptrdiff/intmax */
    for (;; ++f) {
      if (*f == 'h') --len;
      else if (*f == 'l') ++len;
      else if (*f == 'z' || *f == 'j' || *f == 't') len = 3;
      else if (*f == 'L' || *f == 'q') len = 2;
      else break;
    }
    char c = *f;
    if (!c) break;
    ++f;
    sp.conv = c;
    switch (c) {
      case 'd': case 'i': {
        long long v = args.sint(len);
        if (len == 0) v = (int)v;
        else if (len == -1) v = (short)v;
        else if (len <= -2) v = (signed char)v;
        bool neg = v < 0;
        fmt_int(o, sp, neg ? 0ULL - (unsigned long long)v : (unsigned long long)v, neg, 10, false);
        break;
      }
      case 'u': case 'x': case 'X': case 'o': {
        unsigned long long v = args.uint(len);
        if (len == 0) v = (unsigned int)v;
        else if (len == -1) v = (unsigned short)v;
        else if (len <= -2) v = (unsigned char)v;
        sp.plus = sp.space = false;
        fmt_int(o, sp, v, false, c == 'u' ? 10 : c == 'o' ? 8 : 16, c == 'X');
        break;
      }
      case 'p': {
        unsigned long long v = (unsigned long long)args.ptr();
        if (!v) { sp.zero = false; emit(o, sp, "", "(nil)", 5, false); break; }
        sp.alt = true; sp.plus = sp.space = false;
        fmt_int(o, sp, v, false, 16, false);
        break;
      }
      case 'c': {
        char ch = (char)args.sint(0);
        emit(o, sp, "", &ch, 1, false);
        break;
      }
      case 's': {
        const char *s = (const char *)args.ptr();
        if (!s) s = "(null)";
        unsigned n = 0;
        while (s[n] && (sp.prec < 0 || n < (unsigned)sp.prec)) ++n;
        emit(o, sp, "", s, n, false);
        break;
      }
      case 'f': case 'F': case 'e': case 'E': case 'g': case 'G': case 'a': case 'A': {
        double v = args.dbl();
        if (c == 'a' || c == 'A') sp.conv = c == 'a' ? 'e' : 'E';
        fmt_float(o, sp, v);
        break;
      }
      case 'n': (void)args.ptr(); break;
      case '%': o.put('%'); break;
      default: o.put('%'); o.put(c); break;
    }
  }
  return (int)o.n;
}

}  // namespace

namespace {
int emit_printf(const char *fmt, Args &args) {
  char local[4096];
  Out o = {local, sizeof local, 0};
  int n = format(o, fmt, args);
  unsigned keep = o.n < o.cap ? o.n : o.cap;
  char *dst = (char *)svc->printf_buf;
  unsigned long long *count = (unsigned long long *)svc->printf_used_at;
  unsigned long long used = *count;
  for (unsigned i = 0; i < keep && used < svc->printf_cap; ++i) dst[used++] = local[i];
  *count = used;
  return n;
}
}  // namespace

extern "C" HRR_HIDDEN int printf(const char *fmt, ...) {
  __builtin_va_list ap;
  __builtin_va_start(ap, fmt);
  Args args = {0, 0, 0, &ap};
  int n = emit_printf(fmt, args);
  __builtin_va_end(ap);
  return n;
}

extern "C" HRR_HIDDEN int __hrr_printf(const char *fmt, const __hrr_printf_arg *arr, unsigned n) {
  Args args = {arr, n, 0, 0};
  return emit_printf(fmt, args);
}
