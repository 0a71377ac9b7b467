/* A stand-in libamdhip64.so for testing hrr's `hip` backend through hip-python's real
 * Cython code on a machine without ROCm (tests/backends/hipbackend/test_hip_backend*.py
 * build it with gcc). It exports only the symbols those tests' calls need.
 *
 * HRR_STANDIN_MODE (read at every call):
 *   "nodevice" (default): a runtime on a machine with no AMD GPU; every call returns
 *     hipErrorNoDevice (100) and leaves its outputs zero/NULL.
 *   "ok": a device whose "device memory" is host memory: hipMalloc/hipMemcpy/hipMemset
 *     work, hipModuleLoadData accepts an ELF or clang offload bundle, and launching the
 *     fixture kernel `vadd(const float* a, const float* b, float* c, int n)` computes
 *     c[i] = a[i] + b[i] on the host. Host functions run at once (streams are synchronous).
 * HRR_STANDIN_LOG: a file each launch appends "<kernel> <kernarg bytes in hex>\n" to, so
 *   a test sees the exact bytes hip-python handed the runtime.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int hipError_t;
enum { hipSuccess = 0, hipErrorInvalidValue = 1, hipErrorNoDevice = 100,
       hipErrorInvalidImage = 200, hipErrorNotFound = 500 };

typedef struct { char name[64]; } standin_function;
typedef void (*hipHostFn_t)(void *);

static int ok_mode(void) {
  const char *m = getenv("HRR_STANDIN_MODE");
  return m != NULL && strcmp(m, "ok") == 0;
}

static hipError_t last_error = hipSuccess;
static hipError_t ret(hipError_t e) {
  if (e != hipSuccess) last_error = e;
  return e;
}
#define NODEVICE_UNLESS_OK() do { if (!ok_mode()) return ret(hipErrorNoDevice); } while (0)

static void log_launch(const char *name, const unsigned char *args, size_t n) {
  const char *path = getenv("HRR_STANDIN_LOG");
  if (path == NULL) return;
  FILE *f = fopen(path, "a");
  if (f == NULL) return;
  fprintf(f, "%s ", name);
  for (size_t i = 0; i < n; i++) fprintf(f, "%02x", args[i]);
  fprintf(f, "\n");
  fclose(f);
}

hipError_t hipInit(unsigned int flags) { (void)flags; NODEVICE_UNLESS_OK(); return hipSuccess; }

hipError_t hipGetDeviceCount(int *count) {
  if (count) *count = ok_mode() ? 1 : 0;
  NODEVICE_UNLESS_OK();
  return hipSuccess;
}

hipError_t hipSetDevice(int id) { NODEVICE_UNLESS_OK(); return id == 0 ? hipSuccess : ret(101); }

hipError_t hipGetDevice(int *id) {
  if (id) *id = 0;
  NODEVICE_UNLESS_OK();
  return hipSuccess;
}

hipError_t hipDeviceSynchronize(void) { NODEVICE_UNLESS_OK(); return hipSuccess; }
hipError_t hipDeviceReset(void) { NODEVICE_UNLESS_OK(); return hipSuccess; }

hipError_t hipGetLastError(void) { hipError_t e = last_error; last_error = hipSuccess; return e; }
hipError_t hipPeekAtLastError(void) { return last_error; }

const char *hipGetErrorName(hipError_t e) {
  switch (e) {
    case hipSuccess: return "hipSuccess";
    case hipErrorNoDevice: return "hipErrorNoDevice";
    default: return "hipErrorUnknown";
  }
}
const char *hipGetErrorString(hipError_t e) { return hipGetErrorName(e); }

/* Not in hrr's catalogue: the tests' uncatalogued call. */
hipError_t hipExtGetLastError(void) { NODEVICE_UNLESS_OK(); return hipSuccess; }

hipError_t hipMalloc(void **ptr, size_t size) {
  if (ptr) *ptr = NULL;
  NODEVICE_UNLESS_OK();
  if (ptr == NULL) return ret(hipErrorInvalidValue);
  *ptr = calloc(1, size ? size : 1);
  return hipSuccess;
}

hipError_t hipFree(void *ptr) { NODEVICE_UNLESS_OK(); free(ptr); return hipSuccess; }

hipError_t hipHostMalloc(void **ptr, size_t size, unsigned int flags) {
  (void)flags;
  return hipMalloc(ptr, size);
}

hipError_t hipHostFree(void *ptr) { return hipFree(ptr); }

hipError_t hipMemcpy(void *dst, const void *src, size_t n, int kind) {
  (void)kind;
  NODEVICE_UNLESS_OK();
  if ((dst == NULL || src == NULL) && n) return ret(hipErrorInvalidValue);
  memmove(dst, src, n);
  return hipSuccess;
}

hipError_t hipMemset(void *dst, int value, size_t n) {
  NODEVICE_UNLESS_OK();
  if (dst == NULL && n) return ret(hipErrorInvalidValue);
  memset(dst, value, n);
  return hipSuccess;
}

hipError_t hipStreamCreate(void **stream) {
  if (stream) *stream = NULL;
  NODEVICE_UNLESS_OK();
  *stream = malloc(1);
  return hipSuccess;
}

hipError_t hipStreamDestroy(void *stream) { NODEVICE_UNLESS_OK(); free(stream); return hipSuccess; }
hipError_t hipStreamSynchronize(void *stream) { (void)stream; NODEVICE_UNLESS_OK(); return hipSuccess; }

hipError_t hipStreamIsCapturing(void *stream, int *status) {
  (void)stream;
  if (status) *status = 0;
  NODEVICE_UNLESS_OK();
  return hipSuccess;
}

hipError_t hipLaunchHostFunc(void *stream, hipHostFn_t fn, void *user_data) {
  (void)stream;
  NODEVICE_UNLESS_OK();
  if (fn == NULL) return ret(hipErrorInvalidValue);
  fn(user_data);
  return hipSuccess;
}

hipError_t hipModuleLoadData(void **module, const void *image) {
  if (module) *module = NULL;
  NODEVICE_UNLESS_OK();
  if (module == NULL || image == NULL) return ret(hipErrorInvalidValue);
  if (memcmp(image, "\x7f" "ELF", 4) != 0 && memcmp(image, "__CLANG_OFFLOAD_BUNDLE__", 24) != 0)
    return ret(hipErrorInvalidImage);
  *module = malloc(1);
  return hipSuccess;
}

hipError_t hipModuleUnload(void *module) { NODEVICE_UNLESS_OK(); free(module); return hipSuccess; }

hipError_t hipModuleGetFunction(void **function, void *module, const char *name) {
  if (function) *function = NULL;
  NODEVICE_UNLESS_OK();
  if (function == NULL || module == NULL || name == NULL) return ret(hipErrorInvalidValue);
  if (strcmp(name, "vadd") != 0 && strcmp(name, "scale") != 0 && strcmp(name, "strided") != 0)
    return ret(hipErrorNotFound);
  standin_function *f = calloc(1, sizeof *f);
  strncpy(f->name, name, sizeof f->name - 1);
  *function = f;
  return hipSuccess;
}

/* vadd's kernarg layout, as its code object's metadata gives it: three pointers and an int. */
static const size_t VADD_OFFSETS[4] = {0, 8, 16, 24}, VADD_SIZES[4] = {8, 8, 8, 4};

hipError_t hipModuleLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                                 unsigned by, unsigned bz, unsigned shared, void *stream,
                                 void **kernel_params, void **extra) {
  (void)gy; (void)gz; (void)by; (void)bz; (void)shared; (void)stream;
  NODEVICE_UNLESS_OK();
  if (f == NULL || gx == 0 || bx == 0) return ret(hipErrorInvalidValue);
  const standin_function *fn = f;
  unsigned char args[64] = {0};
  size_t n = 0;
  if (extra != NULL) {  /* HIP_LAUNCH_PARAM_BUFFER_POINTER, buf, _SIZE, &size, _END */
    if ((uintptr_t)extra[0] != 1 || (uintptr_t)extra[2] != 2 || (uintptr_t)extra[4] != 3)
      return ret(hipErrorInvalidValue);
    n = *(size_t *)extra[3];
    if (n > sizeof args) return ret(hipErrorInvalidValue);
    memcpy(args, extra[1], n);
  } else if (kernel_params != NULL && strcmp(fn->name, "vadd") == 0) {
    for (int i = 0; i < 4; i++) memcpy(args + VADD_OFFSETS[i], kernel_params[i], VADD_SIZES[i]);
    n = 28;
  } else {
    return ret(hipErrorInvalidValue);
  }
  log_launch(fn->name, args, n);
  if (strcmp(fn->name, "vadd") == 0 && n >= 28) {
    const float *a, *b;
    float *c;
    int32_t count;
    memcpy(&a, args, 8); memcpy(&b, args + 8, 8); memcpy(&c, args + 16, 8); memcpy(&count, args + 24, 4);
    for (int32_t i = 0; i < count; i++) c[i] = a[i] + b[i];
  }
  return hipSuccess;
}
