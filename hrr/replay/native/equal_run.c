/* The records after a replayed launch that are equal to it, counted without a Python frame.
 *
 * equal_run(items, template, limit) -> (count, item): takes items from the iterator ``items``
 * (the reader's ``(index, offset, value)`` tuples) while each one's value is a wire record
 * ``[seq, tid, api, args, err, outs, extra]`` whose seq is a non-negative int and whose other
 * six fields are strictly equal to ``template``'s (the same types all the way down: 1 and 1.0
 * or True differ), at most ``limit`` of them. ``count`` is how many were taken; ``item`` is the
 * first one taken from the iterator that is not such a record (the caller replays it next), or
 * None when the limit was reached or the iterator ended. hrr/replay/runs.py holds the same
 * rule in Python, the fallback where this cannot be built; the tests compare the two.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define WIRE_LEN 7
#define MAX_DEPTH 32

/* 1 when a and b are the same value of the same types all the way down, 0 when not, -1 on error. */
static int strict_equal(PyObject *a, PyObject *b, int depth) {
    if (a == b) return 1;
    PyTypeObject *t = Py_TYPE(a);
    if (t != Py_TYPE(b) || depth > MAX_DEPTH) return 0;
    if (t == &PyLong_Type || t == &PyUnicode_Type || t == &PyBytes_Type || t == &PyFloat_Type)
        return PyObject_RichCompareBool(a, b, Py_EQ);
    if (t == &PyList_Type) {
        Py_ssize_t n = PyList_GET_SIZE(a);
        if (n != PyList_GET_SIZE(b)) return 0;
        for (Py_ssize_t i = 0; i < n; i++) {
            int r = strict_equal(PyList_GET_ITEM(a, i), PyList_GET_ITEM(b, i), depth + 1);
            if (r != 1) return r;
        }
        return 1;
    }
    if (t == &PyDict_Type) {
        if (PyDict_GET_SIZE(a) != PyDict_GET_SIZE(b)) return 0;
        Py_ssize_t pos = 0;
        PyObject *key, *value;
        while (PyDict_Next(a, &pos, &key, &value)) {
            if (!PyUnicode_CheckExact(key)) return 0;
            PyObject *other = PyDict_GetItemWithError(b, key);
            if (other == NULL) return PyErr_Occurred() ? -1 : 0;
            int r = strict_equal(value, other, depth + 1);
            if (r != 1) return r;
        }
        return 1;
    }
    return 0;   /* None and True are singletons (a == b above); anything else is not taken */
}

/* 1 when item is a record like template but for its seq, 0 when not, -1 on error. */
static int matches(PyObject *item, PyObject *template) {
    if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 3) return 0;
    PyObject *value = PyTuple_GET_ITEM(item, 2);
    if (!PyList_CheckExact(value) || PyList_GET_SIZE(value) != WIRE_LEN) return 0;
    PyObject *seq = PyList_GET_ITEM(value, 0);
    if (!PyLong_CheckExact(seq)) return 0;
    int overflow = 0;
    long long s = PyLong_AsLongLongAndOverflow(seq, &overflow);
    if (s == -1 && PyErr_Occurred()) return -1;
    if (overflow < 0 || (overflow == 0 && s < 0)) return 0;
    for (Py_ssize_t i = 1; i < WIRE_LEN; i++) {
        int r = strict_equal(PyList_GET_ITEM(value, i), PyList_GET_ITEM(template, i), 0);
        if (r != 1) return r;
    }
    return 1;
}

static PyObject *equal_run(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "equal_run(items, template, limit) takes three arguments");
        return NULL;
    }
    PyObject *items = args[0], *template = args[1];
    if (!PyIter_Check(items)) {
        PyErr_SetString(PyExc_TypeError, "equal_run: items must be an iterator");
        return NULL;
    }
    if (!PyList_CheckExact(template) || PyList_GET_SIZE(template) != WIRE_LEN) {
        PyErr_SetString(PyExc_ValueError, "equal_run: template must be a wire record (a list of 7)");
        return NULL;
    }
    Py_ssize_t limit = PyNumber_AsSsize_t(args[2], PyExc_OverflowError);
    if (limit == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t count = 0;
    PyObject *next = NULL;
    while (count < limit) {
        PyObject *item = PyIter_Next(items);
        if (item == NULL) {
            if (PyErr_Occurred()) return NULL;
            break;
        }
        int r = matches(item, template);
        if (r < 0) {
            Py_DECREF(item);
            return NULL;
        }
        if (r == 0) {
            next = item;
            break;
        }
        Py_DECREF(item);
        count++;
    }
    PyObject *n = PyLong_FromSsize_t(count);
    if (n == NULL) {
        Py_XDECREF(next);
        return NULL;
    }
    PyObject *out = PyTuple_Pack(2, n, next != NULL ? next : Py_None);
    Py_DECREF(n);
    Py_XDECREF(next);
    return out;
}

static PyMethodDef methods[] = {
    {"equal_run", (PyCFunction)(void (*)(void))equal_run, METH_FASTCALL,
     "equal_run(items, template, limit) -> (count, item): the records taken that equal template but for "
     "their seq, and the first that did not (or None)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "hrr_replay_runs",
                                    "replay's run of equal records (hrr.replay.native)", -1, methods};

PyMODINIT_FUNC PyInit_hrr_replay_runs(void) { return PyModule_Create(&module); }
