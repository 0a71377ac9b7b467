/* A launch replay made once and may make again: cuLaunchKernel with fixed arguments.
 *
 * Replay's launch runner validates a launch record once; the records after it that are
 * equal to it (nothing else replayed in between) launch the same kernel with the same
 * argument bytes. PreparedLaunch holds that launch (the driver's function pointer, the
 * function and stream handles, the shape, a private copy of the argument bytes handed to
 * the driver through CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE, which the driver copies during
 * the call) and makes it when called, with no Python frame: it returns ``ok`` when the
 * driver answers 0, else ``on_error(result)``.
 *
 * ``repeat(n)`` makes it n times (replay's run of equal records, hrr/replay/runs.py). Given the
 * driver's graph calls (``graph``), a run of at least GRAPH_MIN launches on a stream that is not
 * capturing goes through a CUDA graph of GRAPH_NODES kernel nodes in a chain (the stream's order),
 * made for that call, launched as often as it fits, and destroyed before the call returns (a
 * graph kept past it could outlive its context); the rest are single launches, and so is
 * everything after a graph launch the driver refused (a single launch's error is the one
 * the records are compared with).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <string.h>

typedef int (*cu_launch_kernel)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                unsigned bz, unsigned shared, void *stream, void **params, void **extra);

typedef int (*cu_graph_create)(void **graph, unsigned flags);
typedef struct {
    void *func;
    unsigned gx, gy, gz, bx, by, bz, shared;
    void **params, **extra;
    void *kern, *ctx;
} kernel_node_params;   /* CUDA_KERNEL_NODE_PARAMS_v2 */
typedef int (*cu_graph_add_kernel_node)(void **node, void *graph, void *const *deps, size_t ndeps,
                                        const kernel_node_params *params);
typedef int (*cu_graph_instantiate)(void **exec, void *graph, unsigned long long flags);
typedef int (*cu_graph_launch)(void *exec, void *stream);
typedef int (*cu_destroy)(void *handle);
typedef int (*cu_stream_is_capturing)(void *stream, int *status);

#define GRAPH_NODES 512
#define GRAPH_MIN 2048

/* The driver's graph calls, by address (all of them, or graphs are not used). */
typedef struct {
    cu_graph_create create;
    cu_graph_add_kernel_node add_kernel_node;
    cu_graph_instantiate instantiate;
    cu_graph_launch launch;
    cu_destroy exec_destroy, destroy;
    cu_stream_is_capturing is_capturing;
} graph_calls;

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
    graph_calls graph;
    int has_graph;
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

/* A graph of GRAPH_NODES launches of self in a chain, instantiated: 0 and *exec set, or the
 * driver's error (nothing left behind). Called without the GIL. */
static int make_graph(Prepared *self, void **exec) {
    void *graph = NULL, *node = NULL, *prev = NULL;
    int res = self->graph.create(&graph, 0);
    if (res != 0) return res;
    kernel_node_params p = {self->function, self->dims[0], self->dims[1], self->dims[2], self->dims[3],
                            self->dims[4], self->dims[5], self->shared, NULL, self->extra, NULL, NULL};
    for (int i = 0; i < GRAPH_NODES && res == 0; i++) {
        res = self->graph.add_kernel_node(&node, graph, prev ? &prev : NULL, prev ? 1 : 0, &p);
        prev = node;
    }
    if (res == 0) res = self->graph.instantiate(exec, graph, 0);
    self->graph.destroy(graph);
    return res;
}

/* n launches: graphs while at least GRAPH_NODES are left (when they can be made and the driver
 * takes them), then single ones, stopping at the first single launch the driver refuses.
 * *made: how many were made. Without the GIL. */
static int launch_many(Prepared *self, Py_ssize_t n, int use_graph, Py_ssize_t *made) {
    int res = 0, capturing = 1;
    *made = 0;
    if (use_graph && self->has_graph && n >= GRAPH_MIN
            && self->graph.is_capturing(self->stream, &capturing) == 0 && capturing == 0) {
        void *exec = NULL;
        if (make_graph(self, &exec) == 0) {
            /* a graph launch the driver refuses leaves the rest to single launches, whose
             * error is the one the records compare */
            while (n - *made >= GRAPH_NODES && self->graph.launch(exec, self->stream) == 0)
                *made += GRAPH_NODES;
            self->graph.exec_destroy(exec);
        }
    }
    while (*made < n && res == 0) {
        res = self->launch(self->function, self->dims[0], self->dims[1], self->dims[2], self->dims[3],
                           self->dims[4], self->dims[5], self->shared, self->stream, NULL, self->extra);
        if (res == 0) *made += 1;
    }
    return res;
}

static PyObject *Prepared_repeat(PyObject *op, PyObject *args, PyObject *kw) {
    Prepared *self = (Prepared *)op;
    static char *names[] = {"n", "graph", NULL};
    Py_ssize_t n;
    int use_graph = 1;
    if (self->args == NULL) {
        PyErr_SetString(PyExc_TypeError, "PreparedLaunch was not made");
        return NULL;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "n|p:repeat", names, &n, &use_graph)) return NULL;
    if (n < 0) {
        PyErr_SetString(PyExc_ValueError, "PreparedLaunch.repeat: n must not be negative");
        return NULL;
    }
    Py_ssize_t made;
    int res;
    Py_BEGIN_ALLOW_THREADS
    res = launch_many(self, n, use_graph, &made);
    Py_END_ALLOW_THREADS
    PyObject *result;
    if (res == 0) {
        result = self->ok;
        Py_INCREF(result);
    } else {
        PyObject *code = PyLong_FromLong(res);
        if (code == NULL) return NULL;
        result = PyObject_CallOneArg(self->on_error, code);
        Py_DECREF(code);
        if (result == NULL) return NULL;
    }
    return Py_BuildValue("(nN)", made, result);
}

static int graph_calls_of(Prepared *self, PyObject *calls) {
    if (calls == Py_None) return 0;
    void **slots[] = {(void **)&self->graph.create, (void **)&self->graph.add_kernel_node,
                      (void **)&self->graph.instantiate, (void **)&self->graph.launch,
                      (void **)&self->graph.exec_destroy, (void **)&self->graph.destroy,
                      (void **)&self->graph.is_capturing};
    Py_ssize_t want = (Py_ssize_t)(sizeof slots / sizeof slots[0]);
    if (!PyTuple_Check(calls) || PyTuple_GET_SIZE(calls) != want) {
        PyErr_Format(PyExc_ValueError, "PreparedLaunch: graph must be None or a tuple of %zd addresses", want);
        return -1;
    }
    for (Py_ssize_t i = 0; i < want; i++) {
        void *p = pointer_of(PyTuple_GET_ITEM(calls, i), "a graph call");
        if (p == NULL) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "PreparedLaunch: a graph call must not be 0");
            return -1;
        }
        *slots[i] = p;
    }
    self->has_graph = 1;
    return 0;
}

static int Prepared_init(PyObject *op, PyObject *args, PyObject *kw) {
    Prepared *self = (Prepared *)op;
    PyObject *launch, *function, *grid, *block, *shared, *stream, *ok, *on_error, *graph = Py_None;
    Py_buffer kernargs;
    static char *names[] = {"launch", "function", "grid", "block", "shared", "stream", "kernargs", "ok", "on_error",
                            "graph", NULL};
    if (self->args != NULL) {
        PyErr_SetString(PyExc_TypeError, "PreparedLaunch is made once");
        return -1;
    }
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOOy*OO|O:PreparedLaunch", names, &launch, &function, &grid, &block,
                                     &shared, &stream, &kernargs, &ok, &on_error, &graph))
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
    if (graph_calls_of(self, graph) < 0) goto done;
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

static PyMethodDef Prepared_methods[] = {
    {"repeat", (PyCFunction)(void (*)(void))Prepared_repeat, METH_VARARGS | METH_KEYWORDS,
     "repeat(n, graph=True) -> (made, result): the launch made n times (through a CUDA graph for a long "
     "run where graph calls were given and graph is true), stopping at the first the driver refuses"},
    {NULL, NULL, 0, NULL},
};

static PyObject *Prepared_graphs(PyObject *op, void *closure) {
    return PyBool_FromLong(((Prepared *)op)->has_graph);
}

static PyGetSetDef Prepared_getset[] = {
    {"graphs", Prepared_graphs, NULL, "whether repeat may go through a CUDA graph", NULL},
    {"size", Prepared_size, NULL, "the argument bytes' length", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PreparedType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hrr_cuda_launch.PreparedLaunch",
    .tp_basicsize = sizeof(Prepared),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "PreparedLaunch(launch, function, grid, block, shared, stream, kernargs, ok, on_error, graph=None): "
              "call it to make cuLaunchKernel (at address launch) with these arguments; graph: the addresses "
              "of cuGraphCreate, cuGraphAddKernelNode_v2, cuGraphInstantiateWithFlags, cuGraphLaunch, "
              "cuGraphExecDestroy, cuGraphDestroy and cuStreamIsCapturing, for repeat",
    .tp_new = Prepared_new,
    .tp_init = Prepared_init,
    .tp_dealloc = Prepared_dealloc,
    .tp_call = Prepared_tp_call,
    .tp_vectorcall_offset = offsetof(Prepared, vectorcall),
    .tp_getset = Prepared_getset,
    .tp_methods = Prepared_methods,
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
