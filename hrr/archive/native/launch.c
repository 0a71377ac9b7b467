/* hrr's native launch recorder: a launch row's capture wrapper in C, for the common case.
 *
 * capture/launches.py makes one LaunchRecorder per launch row whose parameters are all plain
 * values, handles or the launch's own (hipModuleLaunchKernel's shape). A call takes the fast
 * path when it looks like most launches do; anything else goes to the row's Python wrapper
 * (recorder.py), which is also what the fast path records as: the same wire lists, the same
 * kernarg bytes, the same handoff to the backend, the same append_call. The fast path is taken
 * only when, at the call:
 *   no keyword arguments and every parameter given; no stage watches the row (before, after);
 *   no stage wants a LaunchInfo for this launch (launch_scope NONE, or HOST and no pointer
 *   word points at host memory); every value parameter an int, every handle a hip-python
 *   handle, an int or None; the function known to the session with a plan (an ordered
 *   parameter layout); kernelParams a list or tuple of positive int addresses, extra None.
 * The decision is made before the backend is called: once it is, the call is recorded here.
 * Where the backend offers a launch of packed bytes standing for the row's function (cuda's
 * launch_kernargs: the same driver call, result and last error, without the hip surface and the
 * handoff) and the shape and shared size are plain 32-bit ints, the backend is called through it.
 * The pointer-word scan is Python's (CaptureSession.scan_pointers), asked only when a word or
 * the allocation table changed since the plan's last launch.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { K_INT = 0, K_HANDLE = 1, K_NONE = 2 };
enum { SCOPE_NONE = 0, SCOPE_HOST = 1 };
#define MAX_PARAMS 64

static PyObject *s_before, *s_after, *s_scope, *s_writer, *s_append, *s_allocations, *s_version, *s_value,
                *s_launch;

/* -- LaunchPlan: what one kernel's launches need, and its last pointer scan ----------- */
typedef struct {
    PyObject_HEAD
    PyObject *kernel;          /* the kernel's name (str) */
    Py_ssize_t size, nparams, nwords;
    Py_ssize_t *reads;         /* (offset, size) per parameter */
    Py_ssize_t *words;         /* offsets of the words that may hold a pointer */
    PyObject *offsets;         /* the same offsets as capture's scan takes them (WordOffsets) */
    PyObject *param_offsets;   /* list of each parameter's offset, or None */
    PyObject *last_table, *last_version, *last_words, *last_wire;
    int last_all_device;
} Plan;

static int read_offsets(PyObject *seq, Py_ssize_t **out, Py_ssize_t *n, Py_ssize_t width, Py_ssize_t limit) {
    PyObject *fast = PySequence_Fast(seq, "a plan's offsets must be a sequence");
    if (fast == NULL) return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(fast);
    Py_ssize_t *v = PyMem_Calloc(count * width + 1, sizeof(Py_ssize_t));
    if (v == NULL) { Py_DECREF(fast); PyErr_NoMemory(); return -1; }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        for (Py_ssize_t k = 0; k < width; k++) {
            PyObject *x = width == 1 ? item : PySequence_GetItem(item, k);
            if (x == NULL) goto fail;
            Py_ssize_t value = PyNumber_AsSsize_t(x, PyExc_OverflowError);
            if (width != 1) Py_DECREF(x);
            if (value == -1 && PyErr_Occurred()) goto fail;
            v[i * width + k] = value;
        }
        /* a parameter (offset, size) or a word (offset, 8) inside the kernarg buffer */
        Py_ssize_t off = v[i * width], len = width == 1 ? 8 : v[i * width + 1];
        if (off < 0 || len < 0 || off > limit - len) {
            PyErr_SetString(PyExc_ValueError, "a plan's offset lies outside the kernarg buffer");
            goto fail;
        }
    }
    Py_DECREF(fast);
    *out = v;
    *n = count;
    return 0;
fail:
    Py_DECREF(fast);
    PyMem_Free(v);
    return -1;
}

static int Plan_init(Plan *p, PyObject *args, PyObject *kw) {
    PyObject *kernel, *reads, *words, *offsets, *param_offsets;
    Py_ssize_t size;
    if (!PyArg_ParseTuple(args, "UnOOOO:LaunchPlan", &kernel, &size, &reads, &words, &offsets, &param_offsets))
        return -1;
    if (size < 0) {
        PyErr_SetString(PyExc_ValueError, "a plan's kernarg size must not be negative");
        return -1;
    }
    if (param_offsets != Py_None && !PyList_CheckExact(param_offsets)) {
        PyErr_SetString(PyExc_TypeError, "a plan's param_offsets must be a list or None");
        return -1;
    }
    PyMem_Free(p->reads);
    PyMem_Free(p->words);
    p->reads = p->words = NULL;
    p->size = size;
    if (read_offsets(reads, &p->reads, &p->nparams, 2, size) < 0) return -1;
    if (read_offsets(words, &p->words, &p->nwords, 1, size) < 0) return -1;
    Py_INCREF(kernel);
    Py_XSETREF(p->kernel, kernel);
    Py_INCREF(offsets);
    Py_XSETREF(p->offsets, offsets);
    Py_INCREF(param_offsets);
    Py_XSETREF(p->param_offsets, param_offsets);
    Py_CLEAR(p->last_wire);
    return 0;
}

static int Plan_traverse(Plan *p, visitproc visit, void *arg) {
    Py_VISIT(p->kernel);
    Py_VISIT(p->offsets);
    Py_VISIT(p->param_offsets);
    Py_VISIT(p->last_table);
    Py_VISIT(p->last_version);
    Py_VISIT(p->last_words);
    Py_VISIT(p->last_wire);
    return 0;
}

static int Plan_clear(Plan *p) {
    Py_CLEAR(p->kernel);
    Py_CLEAR(p->offsets);
    Py_CLEAR(p->param_offsets);
    Py_CLEAR(p->last_table);
    Py_CLEAR(p->last_version);
    Py_CLEAR(p->last_words);
    Py_CLEAR(p->last_wire);
    return 0;
}

static void Plan_dealloc(Plan *p) {
    PyObject_GC_UnTrack(p);
    Plan_clear(p);
    PyMem_Free(p->reads);
    PyMem_Free(p->words);
    Py_TYPE(p)->tp_free((PyObject *)p);
}

static PyTypeObject PlanType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hrr_record.LaunchPlan",
    .tp_basicsize = sizeof(Plan),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "LaunchPlan(kernel, size, reads, words, offsets, param_offsets): one kernel's launch plan",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Plan_init,
    .tp_dealloc = (destructor)Plan_dealloc,
    .tp_traverse = (traverseproc)Plan_traverse,
    .tp_clear = (inquiry)Plan_clear,
};

/* The plan's pointer words in ``kernargs``, wire form and whether all point at device
 * memory: the last scan's answer while the words and the table are the same, else a scan. */
static PyObject *pointer_wire(Plan *p, PyObject *session, PyObject *miss, const char *kb, PyObject *kernargs,
                              int *all_device) {
    PyObject *table = PyObject_GetAttr(session, s_allocations);
    if (table == NULL) return NULL;
    PyObject *version = PyObject_GetAttr(table, s_version);   /* read first, as the scan does */
    if (version == NULL) { Py_DECREF(table); return NULL; }
    if (p->last_wire != NULL && p->last_table == table) {
        int same = PyObject_RichCompareBool(version, p->last_version, Py_EQ);
        if (same < 0) goto fail;
        const char *lw = PyBytes_AS_STRING(p->last_words);
        for (Py_ssize_t k = 0; same && k < p->nwords; k++)
            same = memcmp(kb + p->words[k], lw + 8 * k, 8) == 0;
        if (same) {
            Py_DECREF(table);
            Py_DECREF(version);
            *all_device = p->last_all_device;
            Py_INCREF(p->last_wire);
            return p->last_wire;
        }
    }
    PyObject *got = PyObject_CallFunctionObjArgs(miss, p->offsets, kernargs, NULL);
    if (got == NULL) goto fail;
    if (!PyTuple_CheckExact(got) || PyTuple_GET_SIZE(got) != 2 || !PyList_CheckExact(PyTuple_GET_ITEM(got, 0))) {
        Py_DECREF(got);
        PyErr_SetString(PyExc_TypeError, "the launch recorder's scan must return (list, bool)");
        goto fail;
    }
    int device = PyObject_IsTrue(PyTuple_GET_ITEM(got, 1));
    if (device < 0) { Py_DECREF(got); goto fail; }
    PyObject *words = PyBytes_FromStringAndSize(NULL, 8 * p->nwords);
    if (words == NULL) { Py_DECREF(got); goto fail; }
    for (Py_ssize_t k = 0; k < p->nwords; k++) memcpy(PyBytes_AS_STRING(words) + 8 * k, kb + p->words[k], 8);
    PyObject *wire = PyTuple_GET_ITEM(got, 0);
    Py_INCREF(wire);
    Py_DECREF(got);
    Py_XSETREF(p->last_table, table);
    Py_XSETREF(p->last_version, version);
    Py_XSETREF(p->last_words, words);
    Py_INCREF(wire);
    Py_XSETREF(p->last_wire, wire);
    p->last_all_device = device;
    *all_device = device;
    return wire;
fail:
    Py_DECREF(table);
    Py_DECREF(version);
    return NULL;
}

/* -- LaunchRecorder ------------------------------------------------------------------- */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback;    /* the row's Python wrapper */
    PyObject *real;        /* the backend's function */
    PyObject *session;     /* .writer.append_call, .allocations */
    PyObject *watchers;    /* .before, .after: the row's watching stages */
    PyObject *ctx;         /* .launch_scope */
    PyObject *handles;     /* frozenset of hip-python handle types */
    PyObject *functions;   /* the session's function table: handle value -> info */
    PyObject *plans;       /* handle value -> (info, LaunchPlan or None) */
    PyObject *make_plan;   /* info -> LaunchPlan or None */
    PyObject *miss;        /* (offsets, kernargs) -> (pointer wire, all on the device) */
    PyObject *packed;      /* kernargs -> the backend's raw extra */
    PyObject *num;         /* the row's API number in this archive */
    /* (function, grid, block, shared, stream, kernargs) -> result: the backend's launch of
     * packed bytes standing for ``real`` (cuda: launch_kernargs), or NULL */
    PyObject *direct;
    Py_ssize_t n, func_at, params_at, extra_at, grid[3], block[3], shared_at, stream_at;
    unsigned char kinds[MAX_PARAMS];
} Rec;

static int attr_true(PyObject *o, PyObject *name) {
    PyObject *v = PyObject_GetAttr(o, name);
    if (v == NULL) return -1;
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    return t;
}

/* The argument's wire value (a new reference), NULL with no error set: not the fast path. */
static PyObject *encode_arg(Rec *r, int kind, PyObject *a) {
    if (kind == K_NONE) Py_RETURN_NONE;
    if (PyLong_CheckExact(a)) { Py_INCREF(a); return a; }
    if (kind != K_HANDLE) return NULL;
    if (a == Py_None) return PyLong_FromLong(0);
    int is_handle = PySet_Contains(r->handles, (PyObject *)Py_TYPE(a));
    if (is_handle <= 0) return NULL;   /* a type's hash cannot fail: 0, not a handle */
    PyObject *v = PyObject_GetAttr(a, s_value);
    if (v != NULL && !PyLong_CheckExact(v)) Py_CLEAR(v);
    return v;
}

static Plan *plan_of(Rec *r, PyObject *fv) {
    PyObject *info = PyDict_GetItemWithError(r->functions, fv);   /* borrowed */
    if (info == NULL) return NULL;
    PyObject *entry = PyDict_GetItemWithError(r->plans, fv);
    if (entry == NULL && PyErr_Occurred()) return NULL;
    if (entry == NULL || PyTuple_GET_ITEM(entry, 0) != info) {
        Py_INCREF(info);   /* the table may change while make_plan runs */
        PyObject *plan = PyObject_CallOneArg(r->make_plan, info);
        if (plan == NULL) { Py_DECREF(info); return NULL; }
        if (plan != Py_None && !PyObject_TypeCheck(plan, &PlanType)) {
            Py_DECREF(plan);
            Py_DECREF(info);
            PyErr_SetString(PyExc_TypeError, "make_plan must return a LaunchPlan or None");
            return NULL;
        }
        entry = PyTuple_Pack(2, info, plan);
        Py_DECREF(plan);
        Py_DECREF(info);
        if (entry == NULL || PyDict_SetItem(r->plans, fv, entry) < 0) { Py_XDECREF(entry); return NULL; }
        Py_DECREF(entry);   /* the dict holds it */
    }
    PyObject *plan = PyTuple_GET_ITEM(entry, 1);
    if (plan == Py_None) return NULL;
    Py_INCREF(plan);
    return (Plan *)plan;
}

/* The kernarg bytes read from kernelParams, or NULL with no error set: not the fast path. */
static PyObject *read_kernargs(Plan *p, PyObject *kp) {
    if (!PyList_CheckExact(kp) && !PyTuple_CheckExact(kp)) return NULL;
    if (PySequence_Fast_GET_SIZE(kp) < p->nparams) return NULL;
    PyObject *out = PyBytes_FromStringAndSize(NULL, p->size);
    if (out == NULL) return NULL;
    char *b = PyBytes_AS_STRING(out);
    memset(b, 0, p->size);
    for (Py_ssize_t j = 0; j < p->nparams; j++) {
        PyObject *e = PySequence_Fast_GET_ITEM(kp, j);
        Py_ssize_t off = p->reads[2 * j], len = p->reads[2 * j + 1];
        if (!PyLong_CheckExact(e)) goto no;
        unsigned long long addr = PyLong_AsUnsignedLongLong(e);
        if (addr == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); goto no; }
        if (addr == 0 || addr > (unsigned long long)PY_SSIZE_T_MAX - (unsigned long long)len) goto no;
        memcpy(b + off, (const void *)(uintptr_t)addr, len);
    }
    return out;
no:
    Py_DECREF(out);
    return NULL;
}

static PyObject *slow(Rec *r, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    if (PyErr_Occurred()) return NULL;
    return PyObject_Vectorcall(r->fallback, args, nargsf, kwnames);
}

static PyObject *list3(PyObject *const *args, const Py_ssize_t *at) {
    PyObject *l = PyList_New(3);
    if (l == NULL) return NULL;
    for (int i = 0; i < 3; i++) {
        Py_INCREF(args[at[i]]);
        PyList_SET_ITEM(l, i, args[at[i]]);
    }
    return l;
}

/* Everything after the backend's call: the record, as the Python wrapper makes it. */
static int record(Rec *r, PyObject *wire, PyObject *launch, PyObject *result) {
    PyObject *first = PySequence_GetItem(result, 0);
    if (first == NULL) return -1;
    PyObject *err = PyNumber_Long(first);
    Py_DECREF(first);
    PyObject *outs = err ? PyList_New(0) : NULL;
    PyObject *extra = outs ? PyDict_New() : NULL;
    PyObject *writer = NULL, *append = NULL, *seq = NULL;
    if (extra != NULL && PyDict_SetItem(extra, s_launch, launch) == 0
            && (writer = PyObject_GetAttr(r->session, s_writer)) != NULL
            && (append = PyObject_GetAttr(writer, s_append)) != NULL) {
        PyObject *a[5] = {r->num, wire, err, outs, extra};
        seq = PyObject_Vectorcall(append, a, 5, NULL);
    }
    Py_XDECREF(err);
    Py_XDECREF(outs);
    Py_XDECREF(extra);
    Py_XDECREF(writer);
    Py_XDECREF(append);
    if (seq == NULL) return -1;
    Py_DECREF(seq);
    return 0;
}

/* 1 when ``v`` is an int in [0, 2**32), else 0 (no error set). */
static int is_u32(PyObject *v) {
    if (!PyLong_CheckExact(v)) return 0;
    int overflow = 0;
    long long d = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (d == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return !overflow && d >= 0 && d <= 0xffffffffLL;
}

/* A tuple of the three arguments at ``at`` when each is an int in [0, 2**32) (a new
 * reference), else NULL with no error set. */
static PyObject *dims3(PyObject *const *args, const Py_ssize_t *at) {
    for (int i = 0; i < 3; i++)
        if (!is_u32(args[at[i]])) return NULL;
    return PyTuple_Pack(3, args[at[0]], args[at[1]], args[at[2]]);
}

/* The backend's direct launch of the packed bytes (r->direct), or NULL with no error set
 * where the arguments are not plain dimensions (``real`` then takes the call). */
static PyObject *launch_direct(Rec *r, PyObject *const *args, PyObject *kernargs) {
    PyObject *shared = args[r->shared_at];
    if (!is_u32(shared)) return NULL;
    PyObject *grid = dims3(args, r->grid);
    if (grid == NULL) return NULL;
    PyObject *block = dims3(args, r->block);
    if (block == NULL) {
        Py_DECREF(grid);
        return NULL;
    }
    PyObject *call[6] = {args[r->func_at], grid, block, shared, r->stream_at >= 0 ? args[r->stream_at] : Py_None,
                         kernargs};
    PyObject *result = PyObject_Vectorcall(r->direct, call, 6, NULL);
    Py_DECREF(grid);
    Py_DECREF(block);
    return result;
}

static PyObject *Rec_call(Rec *r, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if ((kwnames != NULL && PyTuple_GET_SIZE(kwnames)) || nargs != r->n) return slow(r, args, nargsf, kwnames);
    int t = attr_true(r->watchers, s_before);
    if (t != 0) return t < 0 ? NULL : slow(r, args, nargsf, kwnames);
    t = attr_true(r->watchers, s_after);
    if (t != 0) return t < 0 ? NULL : slow(r, args, nargsf, kwnames);
    PyObject *so = PyObject_GetAttr(r->ctx, s_scope);
    if (so == NULL) return NULL;
    long scope = PyLong_AsLong(so);
    Py_DECREF(so);
    if (scope == -1 && PyErr_Occurred()) return NULL;
    if (scope != SCOPE_NONE && scope != SCOPE_HOST) return slow(r, args, nargsf, kwnames);

    PyObject *wire = PyList_New(r->n), *kernargs = NULL, *pwire = NULL, *launch = NULL, *extra = NULL;
    PyObject *result = NULL;
    Plan *plan = NULL;
    if (wire == NULL) return NULL;
    for (Py_ssize_t i = 0; i < r->n; i++) {
        PyObject *v = encode_arg(r, r->kinds[i], args[i]);
        if (v == NULL) goto not_fast;
        PyList_SET_ITEM(wire, i, v);
    }
    if (args[r->extra_at] != Py_None) goto not_fast;
    plan = plan_of(r, PyList_GET_ITEM(wire, r->func_at));
    if (plan == NULL) goto not_fast;
    kernargs = read_kernargs(plan, args[r->params_at]);
    if (kernargs == NULL) goto not_fast;
    int all_device = 0;
    pwire = pointer_wire(plan, r->session, r->miss, PyBytes_AS_STRING(kernargs), kernargs, &all_device);
    if (pwire == NULL) goto done;
    if (scope == SCOPE_HOST && !all_device) goto not_fast;   /* a stage acts on this launch */

    PyObject *grid = list3(args, r->grid), *block = grid ? list3(args, r->block) : NULL;
    Py_ssize_t nl = plan->param_offsets == Py_None ? 5 : 6;
    launch = block ? PyList_New(nl) : NULL;
    if (launch == NULL) { Py_XDECREF(grid); Py_XDECREF(block); goto done; }
    Py_INCREF(plan->kernel);
    PyList_SET_ITEM(launch, 0, plan->kernel);
    PyList_SET_ITEM(launch, 1, grid);
    PyList_SET_ITEM(launch, 2, block);
    Py_INCREF(kernargs);
    PyList_SET_ITEM(launch, 3, kernargs);
    Py_INCREF(pwire);
    PyList_SET_ITEM(launch, 4, pwire);
    if (nl == 6) {
        PyObject *offs = PyList_GetSlice(plan->param_offsets, 0, PyList_GET_SIZE(plan->param_offsets));
        if (offs == NULL) goto done;
        PyList_SET_ITEM(launch, 5, offs);
    }

    if (r->direct != NULL) {
        result = launch_direct(r, args, kernargs);
        if (result == NULL && PyErr_Occurred()) goto done;
    }
    if (result == NULL) {
        extra = PyObject_CallOneArg(r->packed, kernargs);
        if (extra == NULL) goto done;
        PyObject *call[MAX_PARAMS];
        for (Py_ssize_t i = 0; i < r->n; i++) call[i] = args[i];
        call[r->params_at] = Py_None;
        call[r->extra_at] = extra;
        result = PyObject_Vectorcall(r->real, call, r->n, NULL);
    }
    if (result != NULL && record(r, wire, launch, result) < 0) Py_CLEAR(result);
    goto done;

not_fast:
    if (!PyErr_Occurred()) result = PyObject_Vectorcall(r->fallback, args, nargsf, kwnames);
done:
    Py_DECREF(wire);
    Py_XDECREF((PyObject *)plan);
    Py_XDECREF(kernargs);
    Py_XDECREF(pwire);
    Py_XDECREF(launch);
    Py_XDECREF(extra);
    return result;
}

static PyObject *Rec_tp_call(Rec *r, PyObject *args, PyObject *kw) {
    return PyVectorcall_Call((PyObject *)r, args, kw);
}

static int position(PyObject *o, Py_ssize_t n, Py_ssize_t *out) {
    Py_ssize_t v = PyNumber_AsSsize_t(o, PyExc_OverflowError);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v >= n) {
        PyErr_SetString(PyExc_ValueError, "a launch recorder position lies outside the row's parameters");
        return -1;
    }
    *out = v;
    return 0;
}

static int Rec_init(Rec *r, PyObject *args, PyObject *kw) {
    static char *names[] = {"fallback", "real", "session", "watchers", "ctx", "handles", "functions", "make_plan",
                            "miss", "packed", "num", "kinds", "func_at", "params_at", "extra_at",
                            "grid", "block", "direct", "shared_at", "stream_at", NULL};
    PyObject *fallback, *real, *session, *watchers, *ctx, *handles, *functions, *make_plan, *miss, *packed, *num;
    PyObject *func_at, *params_at, *extra_at, *direct = Py_None, *shared_at = Py_None, *stream_at = Py_None;
    Py_buffer kinds;
    PyObject *grid, *block;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOO!O!OOOO!y*OOOOO|OOO:LaunchRecorder", names, &fallback, &real,
                                     &session, &watchers, &ctx, &PyFrozenSet_Type, &handles, &PyDict_Type,
                                     &functions, &make_plan, &miss, &packed, &PyLong_Type, &num, &kinds, &func_at,
                                     &params_at, &extra_at, &grid, &block, &direct, &shared_at, &stream_at))
        return -1;
    Py_ssize_t n = kinds.len;
    int bad = n <= 0 || n > MAX_PARAMS;
    for (Py_ssize_t i = 0; !bad && i < n; i++) bad = ((unsigned char *)kinds.buf)[i] > K_NONE;
    if (!bad) memcpy(r->kinds, kinds.buf, n);
    PyBuffer_Release(&kinds);
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "a launch recorder takes 1 to 64 parameter kinds, each 0, 1 or 2");
        return -1;
    }
    r->n = n;
    if (position(func_at, n, &r->func_at) < 0 || position(params_at, n, &r->params_at) < 0 || position(extra_at, n, &r->extra_at) < 0)
        return -1;
    for (int i = 0; i < 3; i++) {
        PyObject *g = PySequence_GetItem(grid, i), *b = g ? PySequence_GetItem(block, i) : NULL;
        int rc = b ? (position(g, n, &r->grid[i]) < 0 || position(b, n, &r->block[i]) < 0) : -1;
        Py_XDECREF(g);
        Py_XDECREF(b);
        if (rc) return -1;
    }
    if (r->kinds[r->func_at] != K_HANDLE) {
        PyErr_SetString(PyExc_ValueError, "a launch recorder's function parameter must be a handle");
        return -1;
    }
    r->stream_at = -1;
    if (direct != Py_None) {
        if (!PyCallable_Check(direct) || shared_at == Py_None) {
            PyErr_SetString(PyExc_ValueError, "a launch recorder's direct launch must be callable, with shared_at");
            return -1;
        }
        if (position(shared_at, n, &r->shared_at) < 0) return -1;
        if (stream_at != Py_None && position(stream_at, n, &r->stream_at) < 0) return -1;
        Py_INCREF(direct);
        Py_XSETREF(r->direct, direct);
    } else {
        Py_CLEAR(r->direct);
    }
    PyObject *plans = PyDict_New();
    if (plans == NULL) return -1;
    Py_XSETREF(r->plans, plans);
#define KEEP(field) Py_INCREF(field); Py_XSETREF(r->field, field)
    KEEP(fallback); KEEP(real); KEEP(session); KEEP(watchers); KEEP(ctx); KEEP(handles);
    KEEP(functions); KEEP(make_plan); KEEP(miss); KEEP(packed); KEEP(num);
#undef KEEP
    r->vectorcall = (vectorcallfunc)Rec_call;
    return 0;
}

/* The wrapper's name, doc and __wrapped__ are its Python wrapper's. */
static PyObject *Rec_getattro(Rec *r, PyObject *name) {
    if (r->fallback != NULL && PyUnicode_Check(name)) {
        const char *s = PyUnicode_AsUTF8(name);
        if (s != NULL && (!strcmp(s, "__name__") || !strcmp(s, "__qualname__") || !strcmp(s, "__doc__")
                          || !strcmp(s, "__wrapped__") || !strcmp(s, "__module__")))
            return PyObject_GetAttr(r->fallback, name);
    }
    return PyObject_GenericGetAttr((PyObject *)r, name);
}

static int Rec_traverse(Rec *r, visitproc visit, void *arg) {
    Py_VISIT(r->fallback); Py_VISIT(r->real); Py_VISIT(r->session); Py_VISIT(r->watchers); Py_VISIT(r->ctx);
    Py_VISIT(r->handles); Py_VISIT(r->functions); Py_VISIT(r->plans); Py_VISIT(r->make_plan); Py_VISIT(r->miss);
    Py_VISIT(r->packed); Py_VISIT(r->num); Py_VISIT(r->direct);
    return 0;
}

static int Rec_clear(Rec *r) {
    Py_CLEAR(r->fallback); Py_CLEAR(r->real); Py_CLEAR(r->session); Py_CLEAR(r->watchers); Py_CLEAR(r->ctx);
    Py_CLEAR(r->handles); Py_CLEAR(r->functions); Py_CLEAR(r->plans); Py_CLEAR(r->make_plan); Py_CLEAR(r->miss);
    Py_CLEAR(r->packed); Py_CLEAR(r->num); Py_CLEAR(r->direct);
    return 0;
}

static void Rec_dealloc(Rec *r) {
    PyObject_GC_UnTrack(r);
    Rec_clear(r);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static PyObject *Rec_plans(Rec *r, void *unused) {
    Py_INCREF(r->plans);
    return r->plans;
}

static PyObject *Rec_fallback(Rec *r, void *unused) {
    Py_INCREF(r->fallback);
    return r->fallback;
}

static PyGetSetDef Rec_getset[] = {
    {"plans", (getter)Rec_plans, NULL, "handle value -> (function info, LaunchPlan or None)", NULL},
    {"fallback", (getter)Rec_fallback, NULL, "the row's Python wrapper: every call the fast path does not take", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject RecType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hrr_record.LaunchRecorder",
    .tp_basicsize = sizeof(Rec),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A launch row's capture wrapper, natively for the common case (hrr/archive/native/launch.c)",
    .tp_vectorcall_offset = offsetof(Rec, vectorcall),
    .tp_call = (ternaryfunc)Rec_tp_call,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Rec_init,
    .tp_dealloc = (destructor)Rec_dealloc,
    .tp_traverse = (traverseproc)Rec_traverse,
    .tp_clear = (inquiry)Rec_clear,
    .tp_getattro = (getattrofunc)Rec_getattro,
    .tp_getset = Rec_getset,
};

/* Called from the module's init (record.c): adds LaunchPlan and LaunchRecorder. */
int hrr_launch_add_types(PyObject *m) {
#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return -1
    INTERN(s_before, "before"); INTERN(s_after, "after"); INTERN(s_scope, "launch_scope");
    INTERN(s_writer, "writer"); INTERN(s_append, "append_call"); INTERN(s_allocations, "allocations");
    INTERN(s_version, "version"); INTERN(s_value, "_value"); INTERN(s_launch, "launch");
#undef INTERN
    if (PyType_Ready(&PlanType) < 0 || PyType_Ready(&RecType) < 0) return -1;
    Py_INCREF(&PlanType);
    if (PyModule_AddObject(m, "LaunchPlan", (PyObject *)&PlanType) < 0) { Py_DECREF(&PlanType); return -1; }
    Py_INCREF(&RecType);
    if (PyModule_AddObject(m, "LaunchRecorder", (PyObject *)&RecType) < 0) { Py_DECREF(&RecType); return -1; }
    return 0;
}
