/* The contract between a native kernel image (built with hrr_device.h) and the process
 * that runs it (the sim's kernel worker). Mirrored for Python by abi.py, which reads
 * HRR_MATH_TABLE from this file: the table is declared here once. Freestanding: no
 * includes, so an image links no library. */
#ifndef HRR_ABI_H
#define HRR_ABI_H

#define HRR_ABI_VERSION 2

/* Libm functions an image reaches through hrr_services.math (an image links nothing):
 * X(name, signature); F1 float(float), D1 double(double), F2 float(float, float),
 * D2 double(double, double). The order is the table's. */
#define HRR_MATH_TABLE(X) \
  X(sin, D1) X(cos, D1) X(tan, D1) X(asin, D1) X(acos, D1) X(atan, D1) \
  X(sinh, D1) X(cosh, D1) X(tanh, D1) X(asinh, D1) X(acosh, D1) X(atanh, D1) \
  X(exp, D1) X(exp2, D1) X(exp10, D1) X(expm1, D1) X(log, D1) X(log2, D1) X(log10, D1) \
  X(log1p, D1) X(cbrt, D1) X(erf, D1) X(erfc, D1) X(tgamma, D1) X(lgamma, D1) \
  X(floor, D1) X(ceil, D1) X(trunc, D1) X(round, D1) X(rint, D1) X(nearbyint, D1) X(sqrt, D1) \
  X(pow, D2) X(atan2, D2) X(fmod, D2) X(hypot, D2) X(remainder, D2) X(fdim, D2) \
  X(sinf, F1) X(cosf, F1) X(tanf, F1) X(asinf, F1) X(acosf, F1) X(atanf, F1) \
  X(sinhf, F1) X(coshf, F1) X(tanhf, F1) X(asinhf, F1) X(acoshf, F1) X(atanhf, F1) \
  X(expf, F1) X(exp2f, F1) X(exp10f, F1) X(expm1f, F1) X(logf, F1) X(log2f, F1) X(log10f, F1) \
  X(log1pf, F1) X(cbrtf, F1) X(erff, F1) X(erfcf, F1) X(tgammaf, F1) X(lgammaf, F1) \
  X(floorf, F1) X(ceilf, F1) X(truncf, F1) X(roundf, F1) X(rintf, F1) X(nearbyintf, F1) X(sqrtf, F1) \
  X(powf, F2) X(atan2f, F2) X(fmodf, F2) X(hypotf, F2) X(remainderf, F2) X(fdimf, F2)

#define HRR_MATH_INDEX(name, sig) HRR_MATH_##name,
enum hrr_math_index { HRR_MATH_TABLE(HRR_MATH_INDEX) HRR_MATH_COUNT };
#undef HRR_MATH_INDEX

/* What __hrr_launch returns. */
enum hrr_status {
  HRR_OK = 0,
  HRR_E_SHAPE = 1,    /* block larger than max_fibers, or dynamic shared memory over its cap */
  HRR_E_BARRIER = 2,  /* a block cannot go on: threads wait at __syncthreads that others never reach */
  HRR_E_TRAP = 3,     /* the kernel called __trap/abort or an assert failed */
  HRR_E_ABI = 4       /* the services block has another abi_version */
};

/* Everything a launch may use besides device memory: made by the runner before it runs
 * anything (a sandboxed worker cannot allocate afterwards). All fields are 64-bit so the
 * layout is the same in C and in abi.py's ctypes mirror. The worker keeps this block on a
 * read-only page of its own: what a launch writes (the printf count, the trap message, the
 * buffers) is reached through the addresses here. */
struct hrr_services {
  unsigned long long abi_version;      /* HRR_ABI_VERSION */
  unsigned long long dyn_shared;       /* address of the dynamic shared memory buffer */
  unsigned long long dyn_shared_cap;   /* its bytes */
  unsigned long long stacks;           /* address of max_fibers stacks of stack_bytes each */
  unsigned long long stack_bytes;      /* one fiber's stack (a multiple of 4096) */
  unsigned long long max_fibers;       /* the largest block the runner can run */
  unsigned long long printf_buf;       /* address of the printf output buffer */
  unsigned long long printf_cap;       /* its bytes */
  unsigned long long printf_used_at;   /* address of a u64: bytes of printf output so far (the runner resets it) */
  unsigned long long trap_message;     /* address of a 256-byte buffer for HRR_E_TRAP's reason */
  unsigned long long math[HRR_MATH_COUNT];   /* addresses of the libm functions, in table order */
};

/* One launch. kernel is the address of the kernel's entry, void (*)(const void *kernargs). */
struct hrr_launch {
  unsigned long long kernel;
  unsigned long long args;             /* address of the kernarg bytes */
  unsigned int grid[3];
  unsigned int block[3];
  unsigned int dyn_shared_bytes;
  unsigned int reserved;
  unsigned long long services;         /* address of a struct hrr_services */
  unsigned long long block_begin;      /* the blocks to run, by linear index (x fastest): */
  unsigned long long block_end;        /* [block_begin, block_end); block_end 0 means every block */
};

/* Every image exports (as a symbol of its .symtab) int __hrr_launch(const struct hrr_launch *). */

#endif
