/* A launch replay made once and may make again: cuLaunchKernel with fixed arguments.
 *
 * Replay's launch runner validates a launch record once; the records after it that are
 * equal to it (nothing else replayed in between) launch the same kernel with the same
 * argument bytes. PreparedLaunch holds that launch (the driver's function pointer, the
 * function and stream handles, the shape, a private copy of the argument bytes handed to
 * the driver through CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE, which the driver copies during
 * the call) and makes it when called, with no Python frame: it returns ``ok`` when the
 * driver answers 0, else ``on_error(result)``.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>

typedef int (*cu_launch_kernel)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, void *stream, void **params, void **extra);

typedef struct {
    PyObject_HEAD
    cu_launch_kernel launch;
    void *function, *stream;
    unsigned dims[6], shared;
    size_t size;
    void *extra[5];
    char *args;
    PyObject *ok, *on_error;
    vectorcallfunc vectorcall;
} Prepared;

/* An unsigned 32-bit value from a Python int, or -1 with an exception set. */
static int u32_of(PyObject *o, unsigned *out, const char *what) {
    unsigned long long v = PyLong_AsUnsignedLongLong(o);
    if (v == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_ValueError, "PreparedLaunch: %s must be an int in [0, 2**32)", what);
        return -1;
    }
    if (v > 0xffffffffULL) {
        PyErr_Format(PyExc_ValueError, "PreparedLaunch: %s must be an int in [0, 2**32)", what);
        return -1;
    }
    *out = (unsigned)v;
    return 0;
}

static void *pointer_of(PyObject *o, const char *what) {
    void *p = PyLong_AsVoidPtr(o);
    if (p == NULL && PyErr_Occurred())
        PyErr_Format(PyExc_ValueError, "PreparedLaunch: %s must be an address (an int)", what);
    return p;
}

static PyObject *Prepared_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Prepared *self = (Prepared *)op;
    if (PyVectorcall_NARGS(nargsf) != 0 || kwnames != NULL) {
        PyErr_SetString(PyExc_TypeError, "PreparedLaunch takes no arguments");
        return NULL;
    }
    int res;
    Py_BEGIN_ALLOW_THREADS
    res = self->launch(self->function, self->dims[0], self->dims[1], self->dims[2], self->dims[3], self->dims[4],
                       self->dims[5], self->shared, self->stream, NULL, self->extra);
    Py_END_ALLOW_THREADS
    if (res == 0) {
        Py_INCREF(self->ok);
        return self->ok;
    }
    PyObject *code = PyLong_FromLong(res);
    if (code == NULL) return NULL;
    PyObject *out = PyObject_CallOneArg(self->on_error, code);
    Py_DECREF(code);
    return out;
}

static int Prepared_init(PyObject *op, PyObject *args, PyObject *kw) {
    Prepared *self = (Prepared *)op;
    PyObject *launch, *function, *grid, *block, *shared, *stream, *ok, *on_error;
    Py_buffer kernargs;
    static char *names[] = {"launch", "function", "grid", "block", "shared", "stream", "kernargs", "ok", "on_error",
                            NULL};
    if (self->args != NULL) {
        PyErr_SetString(PyExc_TypeError, "PreparedLaunch is made once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOy*OO:PreparedLaunch", names, &launch, &function, &grid, &block,
                                     &shared, &stream, &kernargs, &ok, &on_error))
        return -1;
    int rc = -1;
    if (!PyTuple_Check(grid) || PyTuple_GET_SIZE(grid) != 3 || !PyTuple_Check(block) || PyTuple_GET_SIZE(block) != 3) {
        PyErr_SetString(PyExc_ValueError, "PreparedLaunch: grid and block must be tuples of three ints");
        goto done;
    }
    if (!PyCallable_Check(on_error)) {
        PyErr_SetString(PyExc_ValueError, "PreparedLaunch: on_error must be callable");
        goto done;
    }
    void *fn = pointer_of(launch, "launch");
    if (fn == NULL) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "PreparedLaunch: launch must not be 0");
        goto done;
    }
    self->function = pointer_of(function, "function");
    if (self->function == NULL && PyErr_Occurred()) goto done;
    self->stream = pointer_of(stream, "stream");
    if (self->stream == NULL && PyErr_Occurred()) goto done;
    for (int i = 0; i < 3; i++)
        if (u32_of(PyTuple_GET_ITEM(grid, i), &self->dims[i], "grid") < 0 ||
            u32_of(PyTuple_GET_ITEM(block, i), &self->dims[3 + i], "block") < 0)
            goto done;
    if (u32_of(shared, &self->shared, "shared") < 0) goto done;
    /* at least one byte, so a launch with no arguments still hands the driver a buffer */
    self->args = PyMem_Malloc(kernargs.len ? (size_t)kernargs.len : 1);
    if (self->args == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(self->args, kernargs.buf, (size_t)kernargs.len);
    self->size = (size_t)kernargs.len;
    self->launch = (cu_launch_kernel)fn;
    /* CU_LAUNCH_PARAM_BUFFER_POINTER, the bytes, CU_LAUNCH_PARAM_BUFFER_SIZE, their size, END */
    self->extra[0] = (void *)1;
    self->extra[1] = self->args;
    self->extra[2] = (void *)2;
    self->extra[3] = &self->size;
    self->extra[4] = (void *)0;
    Py_INCREF(ok);
    Py_INCREF(on_error);
    self->ok = ok;
    self->on_error = on_error;
    self->vectorcall = Prepared_call;
    rc = 0;
done:
    PyBuffer_Release(&kernargs);
    return rc;
}

static PyObject *Prepared_tp_call(PyObject *op, PyObject *args, PyObject *kw) {
    if (((Prepared *)op)->args == NULL) {
        PyErr_SetString(PyExc_TypeError, "PreparedLaunch was not made");
        return NULL;
    }
    if (PyTuple_GET_SIZE(args) != 0 || (kw != NULL && PyDict_GET_SIZE(kw) != 0)) {
        PyErr_SetString(PyExc_TypeError, "PreparedLaunch takes no arguments");
        return NULL;
    }
    return Prepared_call(op, NULL, 0, NULL);
}

static PyObject *Prepared_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    Prepared *self = (Prepared *)type->tp_alloc(type, 0);
    if (self != NULL) self->vectorcall = NULL;   /* tp_call refuses until __init__ ran */
    return (PyObject *)self;
}

static void Prepared_dealloc(PyObject *op) {
    Prepared *self = (Prepared *)op;
    PyMem_Free(self->args);
    Py_XDECREF(self->ok);
    Py_XDECREF(self->on_error);
    Py_TYPE(op)->tp_free(op);
}

static PyObject *Prepared_size(PyObject *op, void *closure) {
    return PyLong_FromSize_t(((Prepared *)op)->size);
}

static PyGetSetDef Prepared_getset[] = {
    {"size", Prepared_size, NULL, "the argument bytes' length", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PreparedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hrr_cuda_launch.PreparedLaunch",
    .tp_basicsize = sizeof(Prepared),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "PreparedLaunch(launch, function, grid, block, shared, stream, kernargs, ok, on_error): "
              "call it to make cuLaunchKernel (at address launch) with these arguments",
    .tp_new = Prepared_new,
    .tp_init = Prepared_init,
    .tp_dealloc = Prepared_dealloc,
    .tp_call = Prepared_tp_call,
    .tp_vectorcall_offset = offsetof(Prepared, vectorcall),
    .tp_getset = Prepared_getset,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hrr_cuda_launch",
                                    "replay's prepared cuLaunchKernel (hrr.backends.cuda.native)", -1,
                                    NULL, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit_hrr_cuda_launch(void) {
    if (PyType_Ready(&PreparedType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&PreparedType);
    if (PyModule_AddObject(m, "PreparedLaunch", (PyObject *)&PreparedType) < 0) {
        Py_DECREF(&PreparedType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
