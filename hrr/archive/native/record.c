/* hrr's native record path: ProcessWriter.append_call's fast path in C (hrr/archive/native/).
 *
 * One Core per writer. It is the writer's state lock (acquire/release, a context manager),
 * holds the counters append_call touches (seq, pos, limit, events, batch_full) and the
 * address of the mapped events.bin, and packs a call's record
 * [seq, t, api, args, err, outs, extra] as msgpack with exactly the bytes of msgpack-python's
 * Packer(use_bin_type=True, strict_types=True). Whatever is not the common case goes back to
 * the writer's Python methods with the lock held, so the format, the batch checksum, growth,
 * the size cap and stopping stay written once, in writer.py:
 *   a thread not declared in the open batch, no batch open, recording off -> _append_call_slow
 *   a value this packer does not take (a tuple, a subclass, a huge int) -> _pack_any
 *   a record ending past `limit`                                         -> _place
 *   the batch full after this record                                     -> _close_batch
 * The record's bytes are copied in with its first byte last, as writer.py does: a kill at any
 * instant leaves the record whole or absent. No Python code runs between taking the lock and
 * the first byte's store on the fast path, so a signal handler never sees half a record.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include "structmember.h"
#include "pythread.h"
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    PyObject_HEAD
    PyThread_type_lock lock;
    long long seq, pos, limit, events, batch_full;
    unsigned char *base;          /* the mapping of events.bin; NULL when unmapped */
    PyObject *threads;            /* the writer's _threads dict (thread ident -> index) */
    PyObject *writer;             /* the ProcessWriter, for the slow paths */
    unsigned long last_ident;     /* the last caller's thread ident and its int key */
    PyObject *last_key;
    unsigned char *buf;           /* scratch for one packed record */
    Py_ssize_t len, size;
} Core;

/* -- msgpack, the bytes of msgpack-python's strict packer ------------------------------- */
static int grow(Core *c, Py_ssize_t more) {
    if (c->len + more <= c->size) return 0;
    Py_ssize_t size = c->size ? c->size : 256;
    while (size < c->len + more) size *= 2;
    unsigned char *b = PyMem_Realloc(c->buf, size);
    if (b == NULL) return -1;
    c->buf = b;
    c->size = size;
    return 0;
}

static int put_bytes(Core *c, const void *p, Py_ssize_t n) {
    if (grow(c, n) < 0) return -1;
    __builtin_memcpy(c->buf + c->len, p, n);
    c->len += n;
    return 0;
}

static int put_head(Core *c, unsigned char tag, unsigned long long v, int width) {
    unsigned char b[9];
    b[0] = tag;
    for (int i = 0; i < width; i++) b[1 + i] = (unsigned char)(v >> (8 * (width - 1 - i)));
    return put_bytes(c, b, 1 + width);
}

static int put_ll(Core *c, long long d) {
    if (d < -(1LL << 5)) {
        if (d < -(1LL << 15)) return d < -(1LL << 31) ? put_head(c, 0xd3, (unsigned long long)d, 8)
                                                       : put_head(c, 0xd2, (unsigned long long)d & 0xffffffffu, 4);
        return d < -(1LL << 7) ? put_head(c, 0xd1, (unsigned long long)d & 0xffff, 2)
                               : put_head(c, 0xd0, (unsigned long long)d & 0xff, 1);
    }
    if (d < (1LL << 7)) {
        unsigned char b = (unsigned char)(d & 0xff);
        return put_bytes(c, &b, 1);
    }
    if (d < (1LL << 16)) return d < (1LL << 8) ? put_head(c, 0xcc, d, 1) : put_head(c, 0xcd, d, 2);
    return d < (1LL << 32) ? put_head(c, 0xce, d, 4) : put_head(c, 0xcf, d, 8);
}

static int put_int(Core *c, PyObject *o) {
    int overflow = 0;
    long long d = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow > 0) {
        unsigned long long u = PyLong_AsUnsignedLongLong(o);
        if (u == (unsigned long long)-1 && PyErr_Occurred()) { PyErr_Clear(); return 1; }
        return put_head(c, 0xcf, u, 8);
    }
    if (overflow < 0) return 1;
    if (d == -1 && PyErr_Occurred()) { PyErr_Clear(); return 1; }
    return put_ll(c, d);
}

static int put_len(Core *c, Py_ssize_t n, unsigned char fix, Py_ssize_t fix_max, unsigned char t8,
                   unsigned char t16, unsigned char t32) {
    if (n <= fix_max) { unsigned char b = (unsigned char)(fix | n); return put_bytes(c, &b, 1); }
    if (t8 && n < 256) return put_head(c, t8, n, 1);
    if (n < 65536) return put_head(c, t16, n, 2);
    if ((unsigned long long)n <= 0xffffffffULL) return put_head(c, t32, n, 4);
    return 1;
}

/* 0: packed; 1: not a value this packer takes (the caller packs in Python); -1: error set */
static int pack(Core *c, PyObject *o, int depth) {
    if (depth > MAX_DEPTH) return 1;
    if (o == Py_None) { unsigned char b = 0xc0; return put_bytes(c, &b, 1); }
    if (o == Py_True || o == Py_False) { unsigned char b = o == Py_True ? 0xc3 : 0xc2; return put_bytes(c, &b, 1); }
    if (PyLong_CheckExact(o)) return put_int(c, o);
    if (PyBytes_CheckExact(o)) {
        Py_ssize_t n = PyBytes_GET_SIZE(o);
        int r = put_len(c, n, 0, -1, 0xc4, 0xc5, 0xc6);
        return r ? r : put_bytes(c, PyBytes_AS_STRING(o), n);
    }
    if (PyUnicode_CheckExact(o)) {
        Py_ssize_t n;
        const char *s = PyUnicode_AsUTF8AndSize(o, &n);
        if (s == NULL) { PyErr_Clear(); return 1; }
        int r = put_len(c, n, 0xa0, 31, 0xd9, 0xda, 0xdb);
        return r ? r : put_bytes(c, s, n);
    }
    if (PyList_CheckExact(o)) {
        Py_ssize_t n = PyList_GET_SIZE(o);
        int r = put_len(c, n, 0x90, 15, 0, 0xdc, 0xdd);
        for (Py_ssize_t i = 0; !r && i < PyList_GET_SIZE(o); i++) r = pack(c, PyList_GET_ITEM(o, i), depth + 1);
        return r;
    }
    if (PyDict_CheckExact(o)) {
        Py_ssize_t n = PyDict_GET_SIZE(o), at = 0;
        PyObject *k, *v;
        int r = put_len(c, n, 0x80, 15, 0, 0xde, 0xdf);
        while (!r && PyDict_Next(o, &at, &k, &v)) {
            r = pack(c, k, depth + 1);
            if (!r) r = pack(c, v, depth + 1);
        }
        return r;
    }
    if (PyFloat_CheckExact(o)) {
        double d = PyFloat_AS_DOUBLE(o);
        unsigned long long u;
        __builtin_memcpy(&u, &d, 8);
        return put_head(c, 0xcb, u, 8);
    }
    return 1;
}

/* -- the lock --------------------------------------------------------------------------- */
static int lock_core(Core *c) {
    if (PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) return 0;
    Py_BEGIN_ALLOW_THREADS
    PyThread_acquire_lock(c->lock, WAIT_LOCK);
    Py_END_ALLOW_THREADS
    return 0;
}

static PyObject *Core_acquire(Core *c, PyObject *args, PyObject *kw) {
    static char *names[] = {"blocking", "timeout", NULL};
    int blocking = 1;
    double timeout = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|pd:acquire", names, &blocking, &timeout)) return NULL;
    int got = PyThread_acquire_lock(c->lock, NOWAIT_LOCK);
    if (!got && blocking) {
        PY_TIMEOUT_T us = timeout < 0 ? -1 : (PY_TIMEOUT_T)(timeout * 1e6);
        PyLockStatus st;
        Py_BEGIN_ALLOW_THREADS
        st = PyThread_acquire_lock_timed(c->lock, us, 0);
        Py_END_ALLOW_THREADS
        got = st == PY_LOCK_ACQUIRED;
    }
    return PyBool_FromLong(got);
}

static PyObject *Core_release(Core *c, PyObject *unused) {
    PyThread_release_lock(c->lock);
    Py_RETURN_NONE;
}

static PyObject *Core_enter(Core *c, PyObject *unused) {
    lock_core(c);
    Py_RETURN_TRUE;
}

static PyObject *Core_exit(Core *c, PyObject *args) {
    PyThread_release_lock(c->lock);
    Py_RETURN_FALSE;
}

/* -- append_call ------------------------------------------------------------------------ */
static PyObject *record_list(long long seq, PyObject *t, PyObject *const *a) {
    PyObject *list = PyList_New(7);
    if (list == NULL) return NULL;
    PyObject *s = PyLong_FromLongLong(seq);
    if (s == NULL) { Py_DECREF(list); return NULL; }
    PyList_SET_ITEM(list, 0, s);
    Py_INCREF(t);
    PyList_SET_ITEM(list, 1, t);
    for (int i = 0; i < 5; i++) {
        Py_INCREF(a[i]);
        PyList_SET_ITEM(list, 2 + i, a[i]);
    }
    return list;
}

/* The rest of append_call once the record's bytes are known (lock held): returns 0, or -1 with an error set. */
static int commit(Core *c, const unsigned char *p, Py_ssize_t n) {
    long long pos = c->pos, end = pos + n;
    if (end > c->limit || c->base == NULL) {
        PyObject *payload = PyBytes_FromStringAndSize((const char *)p, n);
        if (payload == NULL) return -1;
        PyObject *r = PyObject_CallMethod(c->writer, "_place", "O", payload);
        Py_DECREF(payload);
        if (r == NULL) return -1;
        Py_DECREF(r);
        return 0;
    }
    unsigned char *at = c->base + pos;
    __builtin_memcpy(at + 1, p + 1, n - 1);
    __atomic_store_n(at, p[0], __ATOMIC_RELEASE);   /* last: the record exists once its first byte is non-zero */
    c->pos = end;
    if (++c->events >= c->batch_full) {
        PyObject *r = PyObject_CallMethod(c->writer, "_close_batch", NULL);
        if (r == NULL) return -1;
        Py_DECREF(r);
    }
    return 0;
}

static PyObject *Core_append_call(Core *c, PyObject *const *a, Py_ssize_t nargs) {
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "append_call(api, args, err, outs, extra) takes 5 arguments");
        return NULL;
    }
    if (c->writer == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "hrr native record core used before bind()");
        return NULL;
    }
    lock_core(c);
    long long seq = c->seq++;
    PyObject *result = NULL;
    unsigned long ident = PyThread_get_thread_ident();
    if (c->last_key == NULL || ident != c->last_ident) {
        PyObject *key = PyLong_FromUnsignedLong(ident);
        if (key == NULL) goto done;
        Py_XSETREF(c->last_key, key);
        c->last_ident = ident;
    }
    PyObject *t = PyDict_GetItemWithError(c->threads, c->last_key);   /* borrowed */
    if (t == NULL) {
        if (PyErr_Occurred()) goto done;
        PyObject *s = PyLong_FromLongLong(seq);
        if (s != NULL) {
            result = PyObject_CallMethod(c->writer, "_append_call_slow", "OOOOOO", s, a[0], a[1], a[2], a[3], a[4]);
            Py_DECREF(s);
        }
        goto done;
    }
    c->len = 0;
    unsigned char head = 0x97;
    int r = put_bytes(c, &head, 1);
    if (!r) r = put_ll(c, seq);
    if (!r) r = pack(c, t, 1);
    for (int i = 0; !r && i < 5; i++) r = pack(c, a[i], 1);
    if (r < 0) goto done;
    if (r > 0) {   /* a value only msgpack-python's lenient packer takes: the writer packs (or refuses) it */
        PyObject *list = record_list(seq, t, a);
        if (list == NULL) goto done;
        PyObject *payload = PyObject_CallMethod(c->writer, "_pack_any", "O", list);
        Py_DECREF(list);
        if (payload == NULL) goto done;
        if (!PyBytes_Check(payload) || PyBytes_GET_SIZE(payload) < 1) {
            Py_DECREF(payload);
            PyErr_SetString(PyExc_TypeError, "the writer's _pack_any must return bytes");
            goto done;
        }
        r = commit(c, (const unsigned char *)PyBytes_AS_STRING(payload), PyBytes_GET_SIZE(payload));
        Py_DECREF(payload);
    } else {
        r = commit(c, c->buf, c->len);
    }
    if (r == 0) result = PyLong_FromLongLong(seq);
done:
    PyThread_release_lock(c->lock);
    return result;
}

static PyObject *Core_bind(Core *c, PyObject *args) {
    PyObject *writer, *threads;
    if (!PyArg_ParseTuple(args, "OO!:bind", &writer, &PyDict_Type, &threads)) return NULL;
    Py_INCREF(writer);
    Py_INCREF(threads);
    Py_XSETREF(c->writer, writer);
    Py_XSETREF(c->threads, threads);
    Py_RETURN_NONE;
}

static PyObject *Core_unbind(Core *c, PyObject *unused) {
    Py_CLEAR(c->writer);
    Py_RETURN_NONE;
}

static PyObject *Core_set_base(Core *c, PyObject *arg) {
    /* The mapping's address, read once (no buffer export is kept: the writer may close it) */
    if (arg == Py_None) { c->base = NULL; Py_RETURN_NONE; }
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_WRITABLE) < 0) return NULL;
    c->base = view.buf;
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
}

static PyObject *Core_locked(Core *c, PyObject *unused) {
    if (PyThread_acquire_lock(c->lock, NOWAIT_LOCK)) {
        PyThread_release_lock(c->lock);
        Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static int Core_init(Core *c, PyObject *args, PyObject *kw) {
    if (!PyArg_ParseTuple(args, ":Core")) return -1;
    if (c->lock == NULL) {
        c->lock = PyThread_allocate_lock();
        if (c->lock == NULL) { PyErr_NoMemory(); return -1; }
    }
    if (c->threads == NULL) {
        c->threads = PyDict_New();
        if (c->threads == NULL) return -1;
    }
    c->limit = -1;
    return 0;
}

static int Core_traverse(Core *c, visitproc visit, void *arg) {
    Py_VISIT(c->writer);
    Py_VISIT(c->threads);
    return 0;
}

static int Core_clear(Core *c) {
    Py_CLEAR(c->writer);
    Py_CLEAR(c->threads);
    Py_CLEAR(c->last_key);
    return 0;
}

static void Core_dealloc(Core *c) {
    PyObject_GC_UnTrack(c);
    Core_clear(c);
    if (c->lock != NULL) PyThread_free_lock(c->lock);
    PyMem_Free(c->buf);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyMethodDef Core_methods[] = {
    {"append_call", (PyCFunction)(void (*)(void))Core_append_call, METH_FASTCALL,
     "append_call(api, args, err, outs, extra) -> seq: ProcessWriter.append_call natively"},
    {"acquire", (PyCFunction)(void (*)(void))Core_acquire, METH_VARARGS | METH_KEYWORDS, "take the lock"},
    {"release", (PyCFunction)Core_release, METH_NOARGS, "give the lock back"},
    {"locked", (PyCFunction)Core_locked, METH_NOARGS, "whether the lock is held"},
    {"__enter__", (PyCFunction)Core_enter, METH_NOARGS, "take the lock"},
    {"__exit__", (PyCFunction)Core_exit, METH_VARARGS, "give the lock back"},
    {"bind", (PyCFunction)Core_bind, METH_VARARGS, "bind(writer, threads): the writer and its thread map"},
    {"unbind", (PyCFunction)Core_unbind, METH_NOARGS, "drop the reference to the writer"},
    {"set_base", (PyCFunction)Core_set_base, METH_O, "set_base(mmap or None): where events.bin is mapped"},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef Core_members[] = {
    {"seq", T_LONGLONG, offsetof(Core, seq), 0, "the next call's sequence number"},
    {"pos", T_LONGLONG, offsetof(Core, pos), 0, "end of the last whole frame"},
    {"limit", T_LONGLONG, offsetof(Core, limit), 0, "the fast path writes a record ending here or before"},
    {"events", T_LONGLONG, offsetof(Core, events), 0, "records written"},
    {"batch_full", T_LONGLONG, offsetof(Core, batch_full), 0, "the open batch is full at this many events"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject CoreType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "hrr_record.Core",
    .tp_basicsize = sizeof(Core),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "A process writer's lock, counters and record packer (hrr/archive/native)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Core_init,
    .tp_dealloc = (destructor)Core_dealloc,
    .tp_traverse = (traverseproc)Core_traverse,
    .tp_clear = (inquiry)Core_clear,
    .tp_methods = Core_methods,
    .tp_members = Core_members,
};

static PyObject *packb(PyObject *mod, PyObject *arg) {
    /* The packer alone (tests compare its bytes with msgpack-python's); None: it does not take arg. */
    Core c;
    __builtin_memset(&c, 0, sizeof c);
    int r = pack(&c, arg, 0);
    PyObject *out = NULL;
    if (r == 0) out = PyBytes_FromStringAndSize((const char *)c.buf, c.len);
    else if (r > 0) { Py_INCREF(Py_None); out = Py_None; }
    PyMem_Free(c.buf);
    return out;
}

static PyMethodDef module_methods[] = {
    {"packb", packb, METH_O, "packb(value) -> bytes, or None when the native packer does not take value"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hrr_record", "hrr's native record path", -1,
                                    module_methods};

int hrr_launch_add_types(PyObject *m);   /* launch.c */

PyMODINIT_FUNC PyInit_hrr_record(void) {
    if (PyType_Ready(&CoreType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL) return NULL;
    Py_INCREF(&CoreType);
    if (PyModule_AddObject(m, "Core", (PyObject *)&CoreType) < 0) {
        Py_DECREF(&CoreType);
        Py_DECREF(m);
        return NULL;
    }
    if (hrr_launch_add_types(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
