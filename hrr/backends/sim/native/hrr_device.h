/* The HIP device environment of a native kernel image, force-included before every unit of a
 * program compiled for the CPU by toolchain.py. Freestanding: the image links no library, so
 * everything a kernel may call is declared here and defined in hrr_runtime.c (the scheduler,
 * printf, the libm table's wrappers, memcpy & co). Blocks run one at a time and the threads of
 * a block as fibers switched only at __syncthreads and warp operations, so __shared__ is a
 * static of the worker's own pages and the atomics need no more than the compiler's __atomic
 * builtins (a launch spread over several workers runs their blocks at the same time, each
 * worker one block at a time: device memory is shared, __shared__ is not).
 *
 * What a kernel has: threadIdx/blockIdx/blockDim/gridDim, warpSize (the wavefront size of the
 * target it is compiled for: 64 on GCN/CDNA, 32 on RDNA; toolchain.py defines
 * HRR_WAVEFRONT_SIZE, as clang defines __AMDGCN_WAVEFRONT_SIZE__ for a GPU), the qualifiers,
 * __shared__ and dynamic shared memory, __syncthreads(_count/_and/_or), __threadfence*, the
 * atomics (int, unsigned, long, long long and their unsigned forms; float, double, __half add),
 * warp shuffles and votes, printf (exact), libm (through the runtime's table) and the
 * intrinsics on top, vector types, __half/__half2, assert/__trap/abort, clock64, and the bits
 * of <limits>/<type_traits> kernels use. What it does not have: warp-synchronous code without
 * warp operations (threads of a warp do not run in lockstep), device malloc/new, textures,
 * cooperative groups, inline assembly (refused). */
#ifndef HRR_DEVICE_H
#define HRR_DEVICE_H

#ifndef __cplusplus
#error "hrr compiles HIP kernels as C++"
#endif

#include "hrr_abi.h"

/* ---- the types and limits <cstdint>, <cstddef>, <climits>, <cfloat> would give ---- */
typedef __INT8_TYPE__ int8_t;
typedef __INT16_TYPE__ int16_t;
typedef __INT32_TYPE__ int32_t;
typedef __INT64_TYPE__ int64_t;
typedef __UINT8_TYPE__ uint8_t;
typedef __UINT16_TYPE__ uint16_t;
typedef __UINT32_TYPE__ uint32_t;
typedef __UINT64_TYPE__ uint64_t;
typedef __INTPTR_TYPE__ intptr_t;
typedef __UINTPTR_TYPE__ uintptr_t;
typedef __INTMAX_TYPE__ intmax_t;
typedef __UINTMAX_TYPE__ uintmax_t;
typedef __SIZE_TYPE__ size_t;
typedef __PTRDIFF_TYPE__ ptrdiff_t;
typedef int64_t int_fast64_t;
typedef uint64_t uint_fast64_t;
typedef int32_t int_fast32_t;
typedef uint32_t uint_fast32_t;
typedef int64_t int_least64_t;
typedef uint64_t uint_least64_t;
typedef int32_t int_least32_t;
typedef uint32_t uint_least32_t;
typedef decltype(nullptr) __hrr_nullptr_t;
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
using ::intptr_t; using ::uintptr_t; using ::intmax_t; using ::uintmax_t;
using ::size_t; using ::ptrdiff_t;
typedef __hrr_nullptr_t nullptr_t;
}
#ifndef NULL
#define NULL nullptr
#endif
#define INT8_MIN (-__INT8_MAX__ - 1)
#define INT8_MAX __INT8_MAX__
#define UINT8_MAX __UINT8_MAX__
#define INT16_MIN (-__INT16_MAX__ - 1)
#define INT16_MAX __INT16_MAX__
#define UINT16_MAX __UINT16_MAX__
#define INT32_MIN (-__INT32_MAX__ - 1)
#define INT32_MAX __INT32_MAX__
#define UINT32_MAX __UINT32_MAX__
#define INT64_MIN (-__INT64_MAX__ - 1)
#define INT64_MAX __INT64_MAX__
#define UINT64_MAX __UINT64_MAX__
#define SIZE_MAX __SIZE_MAX__
#define CHAR_BIT __CHAR_BIT__
#define SCHAR_MAX __SCHAR_MAX__
#define SCHAR_MIN (-__SCHAR_MAX__ - 1)
#define UCHAR_MAX (__SCHAR_MAX__ * 2 + 1)
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define SHRT_MAX __SHRT_MAX__
#define SHRT_MIN (-__SHRT_MAX__ - 1)
#define USHRT_MAX (__SHRT_MAX__ * 2 + 1)
#define INT_MAX __INT_MAX__
#define INT_MIN (-__INT_MAX__ - 1)
#define UINT_MAX (__INT_MAX__ * 2U + 1U)
#define LONG_MAX __LONG_MAX__
#define LONG_MIN (-__LONG_MAX__ - 1L)
#define ULONG_MAX (__LONG_MAX__ * 2UL + 1UL)
#define LLONG_MAX __LONG_LONG_MAX__
#define LLONG_MIN (-__LONG_LONG_MAX__ - 1LL)
#define ULLONG_MAX (__LONG_LONG_MAX__ * 2ULL + 1ULL)
#define FLT_MAX __FLT_MAX__
#define FLT_MIN __FLT_MIN__
#define FLT_EPSILON __FLT_EPSILON__
#define FLT_MANT_DIG __FLT_MANT_DIG__
#define FLT_DIG __FLT_DIG__
#define DBL_MAX __DBL_MAX__
#define DBL_MIN __DBL_MIN__
#define DBL_EPSILON __DBL_EPSILON__
#define DBL_MANT_DIG __DBL_MANT_DIG__
#define DBL_DIG __DBL_DIG__
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
#define HUGE_VALF (__builtin_huge_valf())
#define HUGE_VAL (__builtin_huge_val())
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_2_SQRTPI 1.12837916709551257390
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440

typedef __builtin_va_list va_list;
#define va_start(ap, last) __builtin_va_start(ap, last)
#define va_arg(ap, type) __builtin_va_arg(ap, type)
#define va_end(ap) __builtin_va_end(ap)
#define va_copy(dst, src) __builtin_va_copy(dst, src)
inline void *operator new(size_t, void *p) noexcept { return p; }
inline void *operator new[](size_t, void *p) noexcept { return p; }

/* ---- the little of <type_traits>, <utility> and <limits> kernels use ---- */
namespace std {
template <class T, T v> struct integral_constant {
  static constexpr T value = v;
  typedef T value_type;
  constexpr operator T() const noexcept { return v; }
};
typedef integral_constant<bool, true> true_type;
typedef integral_constant<bool, false> false_type;
template <class A, class B> struct is_same : false_type {};
template <class A> struct is_same<A, A> : true_type {};
template <bool C, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { typedef T type; };
template <bool C, class A, class B> struct conditional { typedef A type; };
template <class A, class B> struct conditional<false, A, B> { typedef B type; };
template <class T> struct remove_reference { typedef T type; };
template <class T> struct remove_reference<T &> { typedef T type; };
template <class T> struct remove_reference<T &&> { typedef T type; };
template <class T> struct remove_const { typedef T type; };
template <class T> struct remove_const<const T> { typedef T type; };
template <class T> struct remove_volatile { typedef T type; };
template <class T> struct remove_volatile<volatile T> { typedef T type; };
template <class T> struct remove_cv { typedef typename remove_const<typename remove_volatile<T>::type>::type type; };
template <class T> struct is_pointer_helper : false_type {};
template <class T> struct is_pointer_helper<T *> : true_type {};
template <class T> struct is_pointer : is_pointer_helper<typename remove_cv<T>::type> {};
template <class T> struct is_floating_point
    : integral_constant<bool, is_same<typename remove_cv<T>::type, float>::value ||
                                  is_same<typename remove_cv<T>::type, double>::value ||
                                  is_same<typename remove_cv<T>::type, long double>::value> {};
template <class T> struct is_integral_helper : false_type {};
#define HRR_INTEGRAL(T) template <> struct is_integral_helper<T> : true_type {};
HRR_INTEGRAL(bool) HRR_INTEGRAL(char) HRR_INTEGRAL(signed char) HRR_INTEGRAL(unsigned char) HRR_INTEGRAL(wchar_t)
HRR_INTEGRAL(char16_t) HRR_INTEGRAL(char32_t) HRR_INTEGRAL(short) HRR_INTEGRAL(unsigned short) HRR_INTEGRAL(int)
HRR_INTEGRAL(unsigned int) HRR_INTEGRAL(long) HRR_INTEGRAL(unsigned long) HRR_INTEGRAL(long long)
HRR_INTEGRAL(unsigned long long)
#undef HRR_INTEGRAL
template <class T> struct is_integral : is_integral_helper<typename remove_cv<T>::type> {};
template <class T> struct is_arithmetic : integral_constant<bool, is_integral<T>::value || is_floating_point<T>::value> {};
template <class T> struct is_signed : integral_constant<bool, is_arithmetic<T>::value && T(-1) < T(0)> {};
template <class T> struct is_unsigned : integral_constant<bool, is_arithmetic<T>::value && !(T(-1) < T(0))> {};
template <class T> constexpr T &&forward(typename remove_reference<T>::type &t) noexcept { return static_cast<T &&>(t); }
template <class T> constexpr typename remove_reference<T>::type &&move(T &&t) noexcept {
  return static_cast<typename remove_reference<T>::type &&>(t);
}
template <class T> struct numeric_limits {
  static constexpr bool is_specialized = false;
};
#define HRR_LIMITS_INT(T, MIN, MAX, DIGITS)                                        \
  template <> struct numeric_limits<T> {                                           \
    static constexpr bool is_specialized = true, is_integer = true, is_signed = (T)(-1) < (T)0; \
    static constexpr int digits = DIGITS;                                          \
    static constexpr T min() noexcept { return MIN; }                              \
    static constexpr T max() noexcept { return MAX; }                              \
    static constexpr T lowest() noexcept { return MIN; }                           \
  };
HRR_LIMITS_INT(bool, false, true, 1)
HRR_LIMITS_INT(char, CHAR_MIN, CHAR_MAX, 7)
HRR_LIMITS_INT(signed char, SCHAR_MIN, SCHAR_MAX, 7)
HRR_LIMITS_INT(unsigned char, 0, UCHAR_MAX, 8)
HRR_LIMITS_INT(short, SHRT_MIN, SHRT_MAX, 15)
HRR_LIMITS_INT(unsigned short, 0, USHRT_MAX, 16)
HRR_LIMITS_INT(int, INT_MIN, INT_MAX, 31)
HRR_LIMITS_INT(unsigned int, 0, UINT_MAX, 32)
HRR_LIMITS_INT(long, LONG_MIN, LONG_MAX, 63)
HRR_LIMITS_INT(unsigned long, 0, ULONG_MAX, 64)
HRR_LIMITS_INT(long long, LLONG_MIN, LLONG_MAX, 63)
HRR_LIMITS_INT(unsigned long long, 0, ULLONG_MAX, 64)
#undef HRR_LIMITS_INT
#define HRR_LIMITS_FLOAT(T, P, S)                                                  \
  template <> struct numeric_limits<T> {                                           \
    static constexpr bool is_specialized = true, is_integer = false, is_signed = true, has_infinity = true, \
                          has_quiet_NaN = true;                                    \
    static constexpr int digits = P##_MANT_DIG__, digits10 = P##_DIG__;             \
    static constexpr T min() noexcept { return P##_MIN__; }                        \
    static constexpr T max() noexcept { return P##_MAX__; }                        \
    static constexpr T lowest() noexcept { return -P##_MAX__; }                    \
    static constexpr T epsilon() noexcept { return P##_EPSILON__; }                \
    static constexpr T denorm_min() noexcept { return P##_DENORM_MIN__; }          \
    static constexpr T infinity() noexcept { return __builtin_huge_val##S(); }     \
    static constexpr T quiet_NaN() noexcept { return __builtin_nan##S(""); }       \
    static constexpr T round_error() noexcept { return (T)0.5; }                   \
  };
HRR_LIMITS_FLOAT(float, __FLT, f)
HRR_LIMITS_FLOAT(double, __DBL, )
#undef HRR_LIMITS_FLOAT
}  // namespace std

/* ---- HIP's qualifiers ---- */
/* clang: kernels go to their own section, so that elfimage.py can tell one that got no entry
 * (g++ refuses templates in a named section) */
#ifdef __clang__
#define __global__ __attribute__((used, section("hrr_kernels")))
#else
#define __global__ __attribute__((used))
#endif
#define __device__
#define __host__
#define __constant__
#define __managed__
/* __shared__ memory is per block, so with blocks spread over several workers it must be each
 * worker's own: the tag names it (B10hrr_shared in its symbol), and the image's link puts every
 * tagged variable in its private pages (HRR_PRIVATE_SECTION; toolchain.py's linker script). */
#define HRR_PRIVATE_SECTION "hrr_private"
#define __shared__ static __attribute__((abi_tag("hrr_shared")))
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __HIP__ 1
#define __HIPCC__ 1
#define __HIP_PLATFORM_AMD__ 1
#define __HIP_DEVICE_COMPILE__ 1
#define __HIPCC_RTC__ 1
#ifndef HRR_WAVEFRONT_SIZE
#define HRR_WAVEFRONT_SIZE 64
#endif
#define warpSize HRR_WAVEFRONT_SIZE
#define __AMDGCN_WAVEFRONT_SIZE__ HRR_WAVEFRONT_SIZE
#define __AMDGCN_WAVEFRONT_SIZE HRR_WAVEFRONT_SIZE
#define HIP_KERNEL_NAME(...) __VA_ARGS__

/* ---- the thread's coordinates: set by the scheduler before it resumes a fiber ---- */
struct uint3 { unsigned int x, y, z; };
struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
};
extern "C" {
extern uint3 threadIdx;
extern uint3 blockIdx;
extern dim3 blockDim;
extern dim3 gridDim;
extern unsigned char *__hrr_dynshared;
void __hrr_syncthreads(void);
int __hrr_syncthreads_count(int predicate);
__attribute__((noreturn)) void __hrr_trap(const char *message);
__attribute__((noreturn)) void __hrr_assert_fail(const char *expr, const char *file, unsigned line,
                                                 const char *func);
unsigned long long __hrr_clock64(void);
int printf(const char *format, ...);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
}
static inline void __syncthreads(void) { __hrr_syncthreads(); }
static inline int __syncthreads_count(int p) { return __hrr_syncthreads_count(p); }
static inline int __syncthreads_and(int p) { return __hrr_syncthreads_count(p) == (int)(blockDim.x * blockDim.y * blockDim.z); }
static inline int __syncthreads_or(int p) { return __hrr_syncthreads_count(p) != 0; }
static inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_block(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline void __threadfence_system(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
static inline long long clock64(void) { return (long long)__hrr_clock64(); }
static inline long long wall_clock64(void) { return (long long)__hrr_clock64(); }
static inline long clock(void) { return (long)__hrr_clock64(); }
__attribute__((noreturn)) static inline void __trap(void) { __hrr_trap("__trap() called"); }
__attribute__((noreturn)) static inline void abort(void) { __hrr_trap("abort() called"); }
#ifdef __FILE_NAME__
#define __HRR_FILE __FILE_NAME__
#else
#define __HRR_FILE __FILE__
#endif
#ifdef NDEBUG
#define assert(e) ((void)0)
#else
#define assert(e) ((e) ? (void)0 : __hrr_assert_fail(#e, __HRR_FILE, __LINE__, __func__))
#endif

/* printf as a template: the runtime gets every argument with its type (integers widened by
 * their own signedness), so "%ld" of an int prints the int, as on a GPU, never stray bits. */
struct __hrr_printf_arg { unsigned long long bits; int kind; };   /* kind: 0 signed, 1 unsigned, 2 double, 3 pointer */
extern "C" int __hrr_printf(const char *format, const __hrr_printf_arg *args, unsigned count);
template <class T> static inline __hrr_printf_arg __hrr_printf_pack_any(T v, std::true_type) {
  return __hrr_printf_arg{(unsigned long long)(long long)v, (T)-1 < (T)0 ? 0 : 1};
}
/* anything else (a struct passed to printf): its first bytes, as an unsigned */
template <class T> static inline __hrr_printf_arg __hrr_printf_pack_any(const T &v, std::false_type) {
  __hrr_printf_arg a = {0, 1};
  __builtin_memcpy(&a.bits, &v, sizeof(T) < 8 ? sizeof(T) : 8);
  return a;
}
template <class T> static inline __hrr_printf_arg __hrr_printf_pack(T v) {
  return __hrr_printf_pack_any(v, std::integral_constant<bool, std::is_integral<T>::value || __is_enum(T)>());
}
static inline __hrr_printf_arg __hrr_printf_pack(bool v) { return __hrr_printf_arg{v ? 1ULL : 0ULL, 1}; }
template <class T> static inline __hrr_printf_arg __hrr_printf_pack(T *v) {
  return __hrr_printf_arg{(unsigned long long)(uintptr_t)v, 3};
}
static inline __hrr_printf_arg __hrr_printf_pack(decltype(nullptr)) { return __hrr_printf_arg{0, 3}; }
static inline __hrr_printf_arg __hrr_printf_pack(double v) {
  __hrr_printf_arg a = {0, 2};
  __builtin_memcpy(&a.bits, &v, 8);
  return a;
}
static inline __hrr_printf_arg __hrr_printf_pack(float v) { return __hrr_printf_pack((double)v); }
struct __half;
static inline float __hrr_half_value(const __half &h);
static inline __hrr_printf_arg __hrr_printf_pack(const __half &v) { return __hrr_printf_pack((double)__hrr_half_value(v)); }
static inline __hrr_printf_arg __hrr_printf_pack(long double v) { return __hrr_printf_pack((double)v); }
static inline __hrr_printf_arg __hrr_printf_pack(unsigned long long v) { return __hrr_printf_arg{v, 1}; }
static inline __hrr_printf_arg __hrr_printf_pack(unsigned long v) { return __hrr_printf_arg{v, 1}; }
template <class T, unsigned N> static inline __hrr_printf_arg __hrr_printf_pack(T (&v)[N]) { return __hrr_printf_pack(&v[0]); }
template <class A0, class... A> static inline int printf(const char *format, A0 a0, A... a) {
  const __hrr_printf_arg args[] = {__hrr_printf_pack(a0), __hrr_printf_pack(a)...};
  return __hrr_printf(format, args, 1 + sizeof...(A));
}
namespace std { using ::memcpy; using ::memmove; using ::memset; using ::memcmp; using ::strlen; using ::printf; }

/* ---- warp operations: a warp's running threads exchange values (the scheduler runs each
 * until all of them have reached the operation) ---- */
extern "C" unsigned long long __hrr_shfl(unsigned long long v, unsigned src_lane);
extern "C" unsigned long long __hrr_vote(int predicate, unsigned long long *active);
static inline unsigned __lane_id(void) {
  return (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & (warpSize - 1);
}
template <class T> static inline T __hrr_shfl_index(T v, int index) {
  static_assert(sizeof(T) <= 8, "a shuffled value is at most 8 bytes");
  unsigned long long bits = 0;
  __builtin_memcpy(&bits, &v, sizeof(T));
  bits = __hrr_shfl(bits, (unsigned)index & (warpSize - 1));
  T out;
  __builtin_memcpy(&out, &bits, sizeof(T));
  return out;
}
template <class T> static inline T __shfl(T v, int src, int width = warpSize) {
  int self = (int)__lane_id();
  return __hrr_shfl_index(v, src + (self & ~(width - 1)));
}
template <class T> static inline T __shfl_up(T v, unsigned delta, int width = warpSize) {
  int self = (int)__lane_id(), index = self - (int)delta;
  return __hrr_shfl_index(v, index < (self & ~(width - 1)) ? self : index);
}
template <class T> static inline T __shfl_down(T v, unsigned delta, int width = warpSize) {
  int self = (int)__lane_id(), index = self + (int)delta;
  return __hrr_shfl_index(v, (self & (width - 1)) + (int)delta >= width ? self : index);
}
template <class T> static inline T __shfl_xor(T v, int mask, int width = warpSize) {
  int self = (int)__lane_id(), index = self ^ mask;
  return __hrr_shfl_index(v, index >= ((self + width) & ~(width - 1)) ? self : index);
}
template <class M, class T> static inline T __shfl_sync(M, T v, int src, int width = warpSize) { return __shfl(v, src, width); }
template <class M, class T> static inline T __shfl_up_sync(M, T v, unsigned d, int width = warpSize) { return __shfl_up(v, d, width); }
template <class M, class T> static inline T __shfl_down_sync(M, T v, unsigned d, int width = warpSize) { return __shfl_down(v, d, width); }
template <class M, class T> static inline T __shfl_xor_sync(M, T v, int m, int width = warpSize) { return __shfl_xor(v, m, width); }
static inline unsigned long long __ballot(int p) { return __hrr_vote(p, 0); }
static inline unsigned long long __activemask(void) { unsigned long long a; __hrr_vote(1, &a); return a; }
static inline int __any(int p) { return __hrr_vote(p, 0) != 0; }
static inline int __all(int p) { unsigned long long a; return __hrr_vote(p, &a) == a; }
template <class M> static inline unsigned long long __ballot_sync(M, int p) { return __ballot(p); }
template <class M> static inline int __any_sync(M, int p) { return __any(p); }
template <class M> static inline int __all_sync(M, int p) { return __all(p); }
static inline void __syncwarp(unsigned long long = ~0ULL) { __hrr_vote(1, 0); }
static inline void __builtin_amdgcn_wave_barrier(void) { __hrr_vote(1, 0); }

/* Dynamic shared memory: `extern __shared__ T name[];` is rewritten by toolchain.py into
 * `static __hrr_dyn_shared<T> name;`, which reads as a T* to the launch's buffer. */
template <class T> struct __hrr_dyn_shared {
  operator T *() const { return reinterpret_cast<T *>(__hrr_dynshared); }
};
#define HIP_DYNAMIC_SHARED(type, var) static __hrr_dyn_shared<type> var;
#define HIP_DYNAMIC_SHARED_ATTRIBUTE

/* ---- atomics ---- */
#define HRR_ATOMIC_INT(T)                                                                            \
  static inline T atomicAdd(T *p, T v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }        \
  static inline T atomicSub(T *p, T v) { return __atomic_fetch_sub(p, v, __ATOMIC_RELAXED); }        \
  static inline T atomicExch(T *p, T v) { return __atomic_exchange_n(p, v, __ATOMIC_RELAXED); }      \
  static inline T atomicAnd(T *p, T v) { return __atomic_fetch_and(p, v, __ATOMIC_RELAXED); }        \
  static inline T atomicOr(T *p, T v) { return __atomic_fetch_or(p, v, __ATOMIC_RELAXED); }          \
  static inline T atomicXor(T *p, T v) { return __atomic_fetch_xor(p, v, __ATOMIC_RELAXED); }        \
  static inline T atomicCAS(T *p, T cmp, T v) {                                                      \
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);             \
    return cmp;                                                                                      \
  }                                                                                                  \
  static inline T atomicMin(T *p, T v) {                                                             \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                    \
    while (v < old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
    return old;                                                                                      \
  }                                                                                                  \
  static inline T atomicMax(T *p, T v) {                                                             \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                    \
    while (v > old && !__atomic_compare_exchange_n(p, &old, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {} \
    return old;                                                                                      \
  }                                                                                                  \
  static inline T atomicInc(T *p, T limit) {                                                         \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                    \
    while (!__atomic_compare_exchange_n(p, &old, old >= limit ? (T)0 : (T)(old + 1), true,          \
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}                      \
    return old;                                                                                      \
  }                                                                                                  \
  static inline T atomicDec(T *p, T limit) {                                                         \
    T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                                    \
    while (!__atomic_compare_exchange_n(p, &old, (old == 0 || old > limit) ? limit : (T)(old - 1), \
                                        true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}                \
    return old;                                                                                      \
  }
HRR_ATOMIC_INT(int)
HRR_ATOMIC_INT(unsigned int)
HRR_ATOMIC_INT(long)
HRR_ATOMIC_INT(unsigned long)
HRR_ATOMIC_INT(long long)
HRR_ATOMIC_INT(unsigned long long)
#undef HRR_ATOMIC_INT

/* Floating atomics work on the value's bits with a compare-exchange loop. */
#define HRR_ATOMIC_FLOAT(T, B)                                                                       \
  static inline T __hrr_bits_to(B b) { T v; __builtin_memcpy(&v, &b, sizeof v); return v; }          \
  static inline B __hrr_to_bits(T v) { B b; __builtin_memcpy(&b, &v, sizeof b); return b; }         \
  static inline T atomicExch(T *p, T v) {                                                            \
    return __hrr_bits_to(__atomic_exchange_n((B *)p, __hrr_to_bits(v), __ATOMIC_RELAXED));          \
  }                                                                                                  \
  static inline T atomicCAS(T *p, T cmp, T v) {                                                      \
    B c = __hrr_to_bits(cmp);                                                                        \
    __atomic_compare_exchange_n((B *)p, &c, __hrr_to_bits(v), false, __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
    return __hrr_bits_to(c);                                                                         \
  }                                                                                                  \
  static inline T __hrr_atomic_update(T *p, T v, int op) {                                           \
    B old = __atomic_load_n((B *)p, __ATOMIC_RELAXED);                                               \
    for (;;) {                                                                                       \
      T o = __hrr_bits_to(old);                                                                      \
      T n = op == 0 ? o + v : op == 1 ? o - v : op == 2 ? (v < o ? v : o) : (v > o ? v : o);        \
      if (__atomic_compare_exchange_n((B *)p, &old, __hrr_to_bits(n), true, __ATOMIC_RELAXED,       \
                                      __ATOMIC_RELAXED))                                             \
        return o;                                                                                    \
    }                                                                                                \
  }                                                                                                  \
  static inline T atomicAdd(T *p, T v) { return __hrr_atomic_update(p, v, 0); }                      \
  static inline T atomicSub(T *p, T v) { return __hrr_atomic_update(p, v, 1); }                      \
  static inline T atomicMin(T *p, T v) { return __hrr_atomic_update(p, v, 2); }                      \
  static inline T atomicMax(T *p, T v) { return __hrr_atomic_update(p, v, 3); }
HRR_ATOMIC_FLOAT(float, unsigned int)
HRR_ATOMIC_FLOAT(double, unsigned long long)
#undef HRR_ATOMIC_FLOAT
#define atomicAdd_system atomicAdd
#define atomicAdd_block atomicAdd
#define atomicExch_system atomicExch
#define atomicCAS_system atomicCAS
#define atomicMax_system atomicMax
#define atomicMin_system atomicMin
#define atomicNoRet_add(p, v) ((void)atomicAdd(p, v))
#define unsafeAtomicAdd atomicAdd
#define safeAtomicAdd atomicAdd

/* ---- math: libm through the services table (hrr_runtime.c defines these) ---- */
#define HRR_MATH_DECL_D1(name) double name(double) noexcept;
#define HRR_MATH_DECL_D2(name) double name(double, double) noexcept;
#define HRR_MATH_DECL_F1(name) float name(float) noexcept;
#define HRR_MATH_DECL_F2(name) float name(float, float) noexcept;
#define HRR_MATH_DECL(name, sig) HRR_MATH_DECL_##sig(name)
extern "C" {
HRR_MATH_TABLE(HRR_MATH_DECL)
}
#undef HRR_MATH_DECL
/* The float overloads C++ and HIP give the double names (sin(float) is sinf). */
#define HRR_MATH_OVL_D1(name) static inline float name(float x) noexcept { return name##f(x); }
#define HRR_MATH_OVL_D2(name) static inline float name(float x, float y) noexcept { return name##f(x, y); }
#define HRR_MATH_OVL_F1(name)
#define HRR_MATH_OVL_F2(name)
#define HRR_MATH_OVL(name, sig) HRR_MATH_OVL_##sig(name)
HRR_MATH_TABLE(HRR_MATH_OVL)
#undef HRR_MATH_OVL
/* Integer (and mixed) arguments go to the double function, as <cmath>'s overloads do. */
#define HRR_MATH_INT_D1(name)                                                                        \
  template <class T>                                                                                 \
  static inline typename std::enable_if<std::is_integral<T>::value, double>::type name(T x) noexcept { \
    return name((double)x);                                                                          \
  }
#define HRR_MATH_INT_D2(name)                                                                        \
  template <class A, class B>                                                                        \
  static inline typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value, \
                                        double>::type name(A a, B b) noexcept {                      \
    return name((double)a, (double)b);                                                               \
  }
#define HRR_MATH_INT_F1(name)
#define HRR_MATH_INT_F2(name)
#define HRR_MATH_INT(name, sig) HRR_MATH_INT_##sig(name)
HRR_MATH_TABLE(HRR_MATH_INT)
#undef HRR_MATH_INT
namespace std {
#define HRR_MATH_USING(name, sig) using ::name;
HRR_MATH_TABLE(HRR_MATH_USING)
#undef HRR_MATH_USING
}

/* Those the compiler does inline (or that are cheap on top of the table). */
static inline float fabsf(float x) noexcept { return __builtin_fabsf(x); }
static inline double fabs(double x) noexcept { return __builtin_fabs(x); }
static inline float fabs(float x) noexcept { return __builtin_fabsf(x); }
/* (written out: some compilers lower the builtins to library calls, which an image cannot make) */
#define HRR_FMINMAX(T, MIN, MAX)                                                                   \
  static inline T MIN(T a, T b) noexcept { return __builtin_isnan(a) ? b : __builtin_isnan(b) ? a : b < a ? b : a; } \
  static inline T MAX(T a, T b) noexcept { return __builtin_isnan(a) ? b : __builtin_isnan(b) ? a : b > a ? b : a; }
HRR_FMINMAX(float, fminf, fmaxf)
HRR_FMINMAX(double, fmin, fmax)
HRR_FMINMAX(float, fmin, fmax)
#undef HRR_FMINMAX
static inline float copysignf(float a, float b) noexcept { return __builtin_copysignf(a, b); }
static inline double copysign(double a, double b) noexcept { return __builtin_copysign(a, b); }
static inline float copysign(float a, float b) noexcept { return __builtin_copysignf(a, b); }
extern "C" float __hrr_fmaf(float a, float b, float c);
extern "C" double __hrr_fma(double a, double b, double c);
static inline float fmaf(float a, float b, float c) noexcept { return __hrr_fmaf(a, b, c); }
static inline double fma(double a, double b, double c) noexcept { return __hrr_fma(a, b, c); }
static inline float fma(float a, float b, float c) noexcept { return __hrr_fmaf(a, b, c); }
static inline float rsqrtf(float x) noexcept { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) noexcept { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) noexcept { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) noexcept { return 1.0 / cbrt(x); }
static inline float __expf(float x) noexcept { return expf(x); }
static inline float __exp10f(float x) noexcept { return exp10f(x); }
static inline float __logf(float x) noexcept { return logf(x); }
static inline float __log2f(float x) noexcept { return log2f(x); }
static inline float __log10f(float x) noexcept { return log10f(x); }
static inline float __sinf(float x) noexcept { return sinf(x); }
static inline float __cosf(float x) noexcept { return cosf(x); }
static inline float __tanf(float x) noexcept { return tanf(x); }
static inline float __powf(float x, float y) noexcept { return powf(x, y); }
static inline float __fdividef(float a, float b) noexcept { return a / b; }
static inline float fdividef(float a, float b) noexcept { return a / b; }
static inline float __frcp_rn(float x) noexcept { return 1.0f / x; }
static inline float __fsqrt_rn(float x) noexcept { return sqrtf(x); }
static inline float __frsqrt_rn(float x) noexcept { return 1.0f / sqrtf(x); }
static inline double __dsqrt_rn(double x) noexcept { return sqrt(x); }
static inline float __fadd_rn(float a, float b) noexcept { return a + b; }
static inline float __fmul_rn(float a, float b) noexcept { return a * b; }
static inline float __fsub_rn(float a, float b) noexcept { return a - b; }
static inline float __fmaf_rn(float a, float b, float c) noexcept { return __hrr_fmaf(a, b, c); }
static inline double __fma_rn(double a, double b, double c) noexcept { return __hrr_fma(a, b, c); }
static inline float __saturatef(float x) noexcept { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
static inline void sincosf(float x, float *s, float *c) noexcept { *s = sinf(x); *c = cosf(x); }
static inline void sincos(double x, double *s, double *c) noexcept { *s = sin(x); *c = cos(x); }
static inline void __sincosf(float x, float *s, float *c) noexcept { *s = sinf(x); *c = cosf(x); }
static inline void sincospif(float x, float *s, float *c) noexcept { *s = sinf((float)M_PI * x); *c = cosf((float)M_PI * x); }
static inline float sinpif(float x) noexcept { return sinf((float)M_PI * x); }
static inline float cospif(float x) noexcept { return cosf((float)M_PI * x); }
static inline double sinpi(double x) noexcept { return sin(M_PI * x); }
static inline double cospi(double x) noexcept { return cos(M_PI * x); }
static inline float modff(float x, float *ip) noexcept { *ip = truncf(x); return x - *ip; }
static inline double modf(double x, double *ip) noexcept { *ip = trunc(x); return x - *ip; }
static inline float ldexpf(float x, int e) noexcept {
  while (e > 100) { x *= 1.2676506002282294e30f; e -= 100; }
  while (e < -100) { x *= 7.888609052210118e-31f; e += 100; }
  float s = 1.0f; if (e >= 0) { while (e--) s *= 2.0f; } else { while (e++) s *= 0.5f; }
  return x * s;
}
static inline double ldexp(double x, int e) noexcept {
  while (e > 1000) { x *= 1.0715086071862673e301; e -= 1000; }
  while (e < -1000) { x *= 9.332636185032189e-302; e += 1000; }
  unsigned long long b = (unsigned long long)(e + 1023) << 52; double s; __builtin_memcpy(&s, &b, 8);
  if (e < -1022) { b = (unsigned long long)(e + 1023 + 54) << 52; __builtin_memcpy(&s, &b, 8); return x * s * 5.551115123125783e-17; }
  return x * s;
}
static inline float scalbnf(float x, int e) noexcept { return ldexpf(x, e); }
static inline double scalbn(double x, int e) noexcept { return ldexp(x, e); }
static inline int abs(int x) noexcept { return x < 0 ? -x : x; }
static inline long labs(long x) noexcept { return x < 0 ? -x : x; }
static inline long long llabs(long long x) noexcept { return x < 0 ? -x : x; }
static inline long abs(long x) noexcept { return x < 0 ? -x : x; }
static inline long long abs(long long x) noexcept { return x < 0 ? -x : x; }
static inline float abs(float x) noexcept { return __builtin_fabsf(x); }
static inline double abs(double x) noexcept { return __builtin_fabs(x); }
#define HRR_FPCLASS(T)                                                                   \
  static inline bool isnan(T x) noexcept { return __builtin_isnan(x); }                \
  static inline bool isinf(T x) noexcept { return __builtin_isinf(x); }                \
  static inline bool isfinite(T x) noexcept { return __builtin_isfinite(x); }          \
  static inline bool signbit(T x) noexcept { return __builtin_signbit(x); }
HRR_FPCLASS(float)
HRR_FPCLASS(double)
#undef HRR_FPCLASS
static inline int __isnanf(float x) noexcept { return __builtin_isnan(x); }
static inline int __isinff(float x) noexcept { return __builtin_isinf(x); }
static inline long lrintf(float x) noexcept { return (long)rintf(x); }
static inline long lrint(double x) noexcept { return (long)rint(x); }
static inline long lroundf(float x) noexcept { return (long)roundf(x); }
static inline long lround(double x) noexcept { return (long)round(x); }
static inline long long llrintf(float x) noexcept { return (long long)rintf(x); }
static inline long long llroundf(float x) noexcept { return (long long)roundf(x); }
static inline int __float2int_rn(float x) noexcept { return (int)rintf(x); }
static inline int __float2int_rz(float x) noexcept { return (int)x; }
static inline int __float2int_rd(float x) noexcept { return (int)floorf(x); }
static inline int __float2int_ru(float x) noexcept { return (int)ceilf(x); }
static inline float __int2float_rn(int x) noexcept { return (float)x; }
static inline int __float_as_int(float x) noexcept { int i; __builtin_memcpy(&i, &x, 4); return i; }
static inline unsigned __float_as_uint(float x) noexcept { unsigned i; __builtin_memcpy(&i, &x, 4); return i; }
static inline float __int_as_float(int i) noexcept { float x; __builtin_memcpy(&x, &i, 4); return x; }
static inline float __uint_as_float(unsigned i) noexcept { float x; __builtin_memcpy(&x, &i, 4); return x; }
static inline long long __double_as_longlong(double x) noexcept { long long i; __builtin_memcpy(&i, &x, 8); return i; }
static inline double __longlong_as_double(long long i) noexcept { double x; __builtin_memcpy(&x, &i, 8); return x; }
static inline int __popc(unsigned x) noexcept { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) noexcept { return __builtin_popcountll(x); }
static inline int __clz(int x) noexcept { return x ? __builtin_clz((unsigned)x) : 32; }
static inline int __clzll(long long x) noexcept { return x ? __builtin_clzll((unsigned long long)x) : 64; }
static inline int __ffs(int x) noexcept { return __builtin_ffs(x); }
static inline int __ffsll(long long x) noexcept { return __builtin_ffsll(x); }
static inline unsigned long long __brevll(unsigned long long x) noexcept {
  unsigned long long r = 0;
  for (int i = 0; i < 64; ++i, x >>= 1) r = (r << 1) | (x & 1);
  return r;
}
static inline unsigned __brev(unsigned x) noexcept { return (unsigned)(__brevll(x) >> 32); }
static inline int __mul24(int a, int b) noexcept { return a * b; }
static inline unsigned __umul24(unsigned a, unsigned b) noexcept { return a * b; }
static inline int __mulhi(int a, int b) noexcept { return (int)(((long long)a * b) >> 32); }
static inline unsigned __umulhi(unsigned a, unsigned b) noexcept { return (unsigned)(((unsigned long long)a * b) >> 32); }
namespace std {
using ::fabs; using ::fmin; using ::fmax; using ::copysign; using ::fma; using ::modf; using ::ldexp;
using ::scalbn; using ::abs; using ::isnan; using ::isinf; using ::isfinite; using ::signbit;
using ::fabsf; using ::fminf; using ::fmaxf; using ::fmaf; using ::lrint; using ::lround;
}

/* min/max as HIP gives them: same-type overloads, and mixed types through the usual
 * arithmetic conversions. */
#define HRR_MINMAX(T)                                                             \
  static inline T min(T a, T b) noexcept { return a < b ? a : b; }              \
  static inline T max(T a, T b) noexcept { return a > b ? a : b; }
HRR_MINMAX(int)
HRR_MINMAX(unsigned int)
HRR_MINMAX(long)
HRR_MINMAX(unsigned long)
HRR_MINMAX(long long)
HRR_MINMAX(unsigned long long)
HRR_MINMAX(float)
HRR_MINMAX(double)
#undef HRR_MINMAX
template <class A, class B> static inline auto min(A a, B b) noexcept -> decltype(a < b ? a : b) { return a < b ? a : b; }
template <class A, class B> static inline auto max(A a, B b) noexcept -> decltype(a > b ? a : b) { return a > b ? a : b; }
static inline unsigned umin(unsigned a, unsigned b) noexcept { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) noexcept { return a > b ? a : b; }
namespace std {
template <class T> constexpr const T &min(const T &a, const T &b) { return b < a ? b : a; }
template <class T> constexpr const T &max(const T &a, const T &b) { return a < b ? b : a; }
template <class T> inline void swap(T &a, T &b) { T t = a; a = b; b = t; }
}

/* ---- HIP's vector types ---- */
#define HRR_VEC3_(T, N) struct N##3 { T x, y, z; };
#define HRR_VEC3_float HRR_VEC3_
#define HRR_VEC3_double HRR_VEC3_
#define HRR_VEC3_int HRR_VEC3_
#define HRR_VEC3_uint(T, N)
#define HRR_VEC3_char HRR_VEC3_
#define HRR_VEC3_uchar HRR_VEC3_
#define HRR_VEC3_short HRR_VEC3_
#define HRR_VEC3_ushort HRR_VEC3_
#define HRR_VEC3_long HRR_VEC3_
#define HRR_VEC3_ulong HRR_VEC3_
#define HRR_VEC3_longlong HRR_VEC3_
#define HRR_VEC3_ulonglong HRR_VEC3_
#define HRR_VEC(T, N)                                                                         \
  struct __attribute__((aligned(sizeof(T) * 1))) N##1 { T x; };                              \
  struct __attribute__((aligned(sizeof(T) * 2))) N##2 { T x, y; };                           \
  HRR_VEC3_##N(T, N)                                                                         \
  struct __attribute__((aligned(sizeof(T) * 4))) N##4 { T x, y, z, w; };                     \
  static inline N##1 make_##N##1(T x) { N##1 v = {x}; return v; }                              \
  static inline N##2 make_##N##2(T x, T y) { N##2 v = {x, y}; return v; }                      \
  static inline N##3 make_##N##3(T x, T y, T z) { N##3 v = {x, y, z}; return v; }              \
  static inline N##4 make_##N##4(T x, T y, T z, T w) { N##4 v = {x, y, z, w}; return v; }
HRR_VEC(float, float)
HRR_VEC(double, double)
HRR_VEC(int, int)
HRR_VEC(unsigned int, uint)
HRR_VEC(signed char, char)
HRR_VEC(unsigned char, uchar)
HRR_VEC(short, short)
HRR_VEC(unsigned short, ushort)
HRR_VEC(long, long)
HRR_VEC(unsigned long, ulong)
HRR_VEC(long long, longlong)
HRR_VEC(unsigned long long, ulonglong)
#undef HRR_VEC

/* ---- __half (IEEE binary16) in software: storage and conversions here (rounded to nearest
 * even, bit for bit as a GPU's), arithmetic through float (whose rounding then to half is exact
 * for + - * /). <hip/hip_fp16.h> adds the `half` names. ---- */
static inline unsigned short __hrr_f2h(float f) {
  unsigned x;
  __builtin_memcpy(&x, &f, 4);
  unsigned sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) return (unsigned short)(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x >= 0x477ff000u) return (unsigned short)(sign | 0x7c00u);
  if (x < 0x38800000u) {
    if (x < 0x33000000u) return (unsigned short)sign;
    unsigned e = x >> 23, m = (x & 0x7fffffu) | 0x800000u, shift = 126 - e;
    unsigned hm = m >> shift, rem = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (hm & 1))) ++hm;
    return (unsigned short)(sign | hm);
  }
  unsigned hm = (x - 0x38000000u) >> 13, rem = x & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (hm & 1))) ++hm;
  return (unsigned short)(sign | hm);
}
static inline float __hrr_h2f(unsigned short h) {
  unsigned sign = (unsigned)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
  if (e == 0) {
    float f = (float)m * 5.9604644775390625e-08f;
    return sign ? -f : f;
  }
  x = e == 31 ? sign | 0x7f800000u | (m << 13) : sign | ((e + 112) << 23) | (m << 13);
  float f;
  __builtin_memcpy(&f, &x, 4);
  return f;
}
struct __half {
  unsigned short __x;
  __half() = default;
  constexpr __half(const __half &) = default;
  __half &operator=(const __half &) = default;
  __half(float f) : __x(__hrr_f2h(f)) {}
  __half(double d) : __x(__hrr_f2h((float)d)) {}
  __half(int i) : __x(__hrr_f2h((float)i)) {}
  __half(unsigned i) : __x(__hrr_f2h((float)i)) {}
  __half(long long i) : __x(__hrr_f2h((float)i)) {}
  operator float() const { return __hrr_h2f(__x); }
  __half &operator+=(float o) { return *this = __half((float)*this + o); }
  __half &operator-=(float o) { return *this = __half((float)*this - o); }
  __half &operator*=(float o) { return *this = __half((float)*this * o); }
  __half &operator/=(float o) { return *this = __half((float)*this / o); }
};
struct __attribute__((aligned(4))) __half2 { __half x, y; };
static inline float __hrr_half_value(const __half &h) { return (float)h; }
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __double2half(double d) { return __half(d); }
static inline float __half2float(__half h) { return (float)h; }
static inline __half __ushort_as_half(unsigned short v) { __half h; h.__x = v; return h; }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline __half __short_as_half(short v) { return __ushort_as_half((unsigned short)v); }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
static inline __half __hsub(__half a, __half b) { return __half((float)a - (float)b); }
static inline __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
static inline __half __hdiv(__half a, __half b) { return __half((float)a / (float)b); }
static inline __half __hfma(__half a, __half b, __half c) { return __half((float)((double)a * (double)b + (double)c)); }
static inline __half __hneg(__half a) { return __ushort_as_half((unsigned short)(a.__x ^ 0x8000u)); }
static inline __half __habs(__half a) { return __ushort_as_half((unsigned short)(a.__x & 0x7fffu)); }
static inline __half __hmax(__half a, __half b) { return fmaxf((float)a, (float)b); }
static inline __half __hmin(__half a, __half b) { return fminf((float)a, (float)b); }
static inline bool __hisnan(__half a) { return (a.__x & 0x7fffu) > 0x7c00u; }
static inline bool __hisinf(__half a) { return (a.__x & 0x7fffu) == 0x7c00u; }
static inline bool __heq(__half a, __half b) { return (float)a == (float)b; }
static inline bool __hne(__half a, __half b) { return (float)a != (float)b; }
static inline bool __hlt(__half a, __half b) { return (float)a < (float)b; }
static inline bool __hle(__half a, __half b) { return (float)a <= (float)b; }
static inline bool __hgt(__half a, __half b) { return (float)a > (float)b; }
static inline bool __hge(__half a, __half b) { return (float)a >= (float)b; }
static inline __half hsqrt(__half a) { return sqrtf((float)a); }
static inline __half hrsqrt(__half a) { return 1.0f / sqrtf((float)a); }
static inline __half hrcp(__half a) { return 1.0f / (float)a; }
static inline __half hexp(__half a) { return expf((float)a); }
static inline __half hlog(__half a) { return logf((float)a); }
static inline __half hsin(__half a) { return sinf((float)a); }
static inline __half hcos(__half a) { return cosf((float)a); }
static inline __half htanh(__half a) { return tanhf((float)a); }
static inline __half2 __halves2half2(__half a, __half b) { __half2 v = {a, b}; return v; }
static inline __half2 __half2half2(__half a) { return __halves2half2(a, a); }
static inline __half2 __floats2half2_rn(float a, float b) { return __halves2half2(__half(a), __half(b)); }
static inline __half2 __float2half2_rn(float a) { return __half2half2(__half(a)); }
static inline __half2 __float22half2_rn(float2 v) { return __floats2half2_rn(v.x, v.y); }
static inline float2 __half22float2(__half2 v) { return make_float2((float)v.x, (float)v.y); }
static inline __half __low2half(__half2 v) { return v.x; }
static inline __half __high2half(__half2 v) { return v.y; }
static inline float __low2float(__half2 v) { return (float)v.x; }
static inline float __high2float(__half2 v) { return (float)v.y; }
static inline __half2 __hadd2(__half2 a, __half2 b) { return __halves2half2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
static inline __half2 __hsub2(__half2 a, __half2 b) { return __halves2half2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }
static inline __half2 __hmul2(__half2 a, __half2 b) { return __halves2half2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
static inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
  return __halves2half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
static inline __half2 __hneg2(__half2 a) { return __halves2half2(__hneg(a.x), __hneg(a.y)); }
static inline __half atomicAdd(__half *p, __half v) {
  unsigned short old = __atomic_load_n(&p->__x, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(&p->__x, &old, __hadd(__ushort_as_half(old), v).__x, true, __ATOMIC_RELAXED,
                                      __ATOMIC_RELAXED)) {}
  return __ushort_as_half(old);
}

/* ---- kernel entry trampolines and their metadata (toolchain.py appends one of each after
 * every __global__ definition) ---- */
namespace __hrr {
template <class T> struct rmref { typedef T type; };
template <class T> struct rmref<T &> { typedef T type; };
template <class T> struct rmref<T &&> { typedef T type; };
template <class T> struct rmcv { typedef T type; };
template <class T> struct rmcv<const T> { typedef T type; };
template <class T> struct rmcv<volatile T> { typedef T type; };
template <class T> struct rmcv<const volatile T> { typedef T type; };
template <class T> struct is_ptr { static constexpr bool value = false; };
template <class T> struct is_ptr<T *> { static constexpr bool value = true; };
template <> struct is_ptr<decltype(nullptr)> { static constexpr bool value = true; };
template <class T> struct is_arith { static constexpr bool value = false; };
#define HRR_ARITH(T) template <> struct is_arith<T> { static constexpr bool value = true; };
HRR_ARITH(bool) HRR_ARITH(char) HRR_ARITH(signed char) HRR_ARITH(unsigned char) HRR_ARITH(wchar_t)
HRR_ARITH(char16_t) HRR_ARITH(char32_t) HRR_ARITH(short) HRR_ARITH(unsigned short) HRR_ARITH(int)
HRR_ARITH(unsigned int) HRR_ARITH(long) HRR_ARITH(unsigned long) HRR_ARITH(long long)
HRR_ARITH(unsigned long long) HRR_ARITH(float) HRR_ARITH(double) HRR_ARITH(long double)
#undef HRR_ARITH
template <class T> struct plain { typedef typename rmcv<typename rmref<T>::type>::type type; };
/* 0 pointer, 1 value (arithmetic or enum), 2 struct (anything else), as in hrr_abi's kernargs. */
template <class T> constexpr unsigned kind() {
  typedef typename plain<T>::type P;
  return is_ptr<P>::value ? 0u : (is_arith<P>::value || __is_enum(P)) ? 1u : 2u;
}
constexpr unsigned align_up(unsigned o, unsigned a) { return (o + a - 1) / a * a; }
/* A parameter lies at its natural alignment after the one before it. */
template <class... A> constexpr unsigned offset_of(unsigned i) {
  const unsigned size[] = {(unsigned)sizeof(typename plain<A>::type)..., 0u};
  const unsigned align[] = {(unsigned)alignof(typename plain<A>::type)..., 1u};
  unsigned o = 0;
  for (unsigned j = 0; j < i; ++j) o = align_up(o, align[j]) + size[j];
  return align_up(o, align[i]);
}
template <unsigned V> struct cu { static constexpr unsigned value = V; };
template <unsigned... I> struct seq {};
template <unsigned N, unsigned... I> struct mkseq : mkseq<N - 1, N - 1, I...> {};
template <unsigned... I> struct mkseq<0, I...> { typedef seq<I...> type; };
template <class T> inline T read(const char *p) {
  union U { char bytes[sizeof(T)]; T value; U() {} ~U() {} } u;
  __builtin_memcpy(u.bytes, p, sizeof(T));
  return u.value;
}
template <class... A, unsigned... I> inline void invoke(void (*k)(A...), const char *args, seq<I...>) {
  k(read<typename plain<A>::type>(args + cu<offset_of<A...>(I)>::value)...);
}
template <class... A> inline void invoke(void (*k)(A...), const void *args) {
  invoke(k, (const char *)args, typename mkseq<sizeof...(A)>::type());
}
struct param { unsigned offset, size, kind; };
/* Read by elfimage.py: entry and kernel are pointers (RELATIVE relocations), then count and
 * count params. */
template <class... A> struct meta {
  void (*entry)(const void *);
  void (*kernel)(A...);
  unsigned count;
  param params[sizeof...(A) == 0 ? 1 : sizeof...(A)];
};
template <class... A, unsigned... I>
constexpr meta<A...> make_meta(void (*entry)(const void *), void (*k)(A...), seq<I...>) {
  return meta<A...>{entry, k, (unsigned)sizeof...(A),
                            {param{offset_of<A...>(I), (unsigned)sizeof(typename plain<A>::type), kind<A>()}...}};
}
template <class... A> constexpr meta<A...> make_meta(void (*entry)(const void *), void (*k)(A...)) {
  return make_meta(entry, k, typename mkseq<sizeof...(A)>::type());
}
}  // namespace __hrr

#ifndef HRR_RUNTIME
/* Kernels run on the CPU inside the sim: inline assembly could read host files (.incbin)
 * or make system calls, so a program may not use it. */
#pragma GCC poison asm __asm__ __asm
#endif

#endif
