/* A prototype of a compiled entry for kept ndimage.correlate calls (issue 64; lab/notes/python.md,
 * "The everyday call's host time"): one CPython call that does what the binding's layers do for
 * a kept plan whose weights are on the image's device: read the image (a NumPy array through the buffer protocol, or a
 * CuPy array through its attributes), check it (float32, 2-D, C-contiguous), set the caller's
 * stream on the context where it changed, allocate the output through the array library's own
 * `empty`, and call mh_conv2d_mode directly (no ctypes). Not part of the product: it
 * measures what such an entry saves (lab/scripts/compiled_entry.py).
 *
 * build: cc -O2 -shared -fPIC $(python3-config --includes) -o _compiled_entry$(python3-config
 *        --extension-suffix) lab/scripts/compiled_entry.c */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef int (*conv2d_mode_fn)(void *ctx, const char *variant, const float *in, size_t rows, size_t cols,
                              const float *filter, size_t krows, size_t kcols, int mode, float cval,
                              long long origin_r, long long origin_c, float *out);
typedef int (*set_stream_fn)(void *ctx, void *stream);

typedef struct {
    PyObject_HEAD
    conv2d_mode_fn conv2d_mode;
    set_stream_fn set_stream;
    void *ctx, *stream;
    const float *filter;
    size_t krows, kcols;
    int mode, cupy;
    float cval;
    long long origin_r, origin_c;
    PyObject *empty, *dtype, *stream_of; /* the array library's empty, float32, current-stream getter */
} Kept;

static void kept_dealloc(Kept *k)
{
    Py_XDECREF(k->empty), Py_XDECREF(k->dtype), Py_XDECREF(k->stream_of);
    Py_TYPE(k)->tp_free((PyObject *)k);
}

/* A CuPy array's device address, rows and cols; -1 with an exception where it is not a float32
 * C-contiguous 2-D array. */
static int read_cupy(Kept *k, PyObject *x, uintptr_t *ptr, Py_ssize_t *rows, Py_ssize_t *cols)
{
    PyObject *dtype = PyObject_GetAttrString(x, "dtype");
    int same = dtype ? PyObject_RichCompareBool(dtype, k->dtype, Py_EQ) : -1;
    Py_XDECREF(dtype);
    if (same != 1) {
        if (same == 0) PyErr_SetString(PyExc_TypeError, "input: not float32");
        return -1;
    }
    PyObject *shape = PyObject_GetAttrString(x, "shape");
    if (!shape || PyTuple_GET_SIZE(shape) != 2) {
        Py_XDECREF(shape);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "input: not 2-D");
        return -1;
    }
    *rows = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 0)), *cols = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, 1));
    Py_DECREF(shape);
    PyObject *flags = PyObject_GetAttrString(x, "flags");
    PyObject *contiguous = flags ? PyObject_GetAttrString(flags, "c_contiguous") : NULL;
    Py_XDECREF(flags);
    const int c = contiguous ? PyObject_IsTrue(contiguous) : -1;
    Py_XDECREF(contiguous);
    if (c != 1) {
        if (c == 0) PyErr_SetString(PyExc_ValueError, "input: not C-contiguous");
        return -1;
    }
    PyObject *data = PyObject_GetAttrString(x, "data");
    PyObject *p = data ? PyObject_GetAttrString(data, "ptr") : NULL;
    Py_XDECREF(data);
    if (!p) return -1;
    *ptr = (uintptr_t)PyLong_AsUnsignedLongLong(p);
    Py_DECREF(p);
    return PyErr_Occurred() ? -1 : 0;
}

static PyObject *kept_call(Kept *k, PyObject *args, PyObject *kwargs)
{
    PyObject *x;
    if (!PyArg_ParseTuple(args, "O", &x)) return NULL;
    uintptr_t in = 0, out = 0;
    Py_ssize_t rows, cols;
    Py_buffer view = {0};
    if (k->cupy) {
        if (read_cupy(k, x, &in, &rows, &cols) < 0) return NULL;
    } else {
        if (PyObject_GetBuffer(x, &view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0) return NULL;
        if (view.ndim != 2 || !view.format || view.format[0] != 'f' || view.format[1]) {
            PyBuffer_Release(&view);
            PyErr_SetString(PyExc_TypeError, "input: not a 2-D float32 array");
            return NULL;
        }
        in = (uintptr_t)view.buf, rows = view.shape[0], cols = view.shape[1];
        PyBuffer_Release(&view); /* the caller holds x for the call */
    }
    if (k->stream_of) { /* the caller's current stream, set on the context where it changed */
        PyObject *s = PyObject_CallNoArgs(k->stream_of);
        if (s && !PyLong_Check(s)) { /* a Stream object: its handle */
            PyObject *p = PyObject_GetAttrString(s, "ptr");
            Py_DECREF(s);
            s = p;
        }
        if (!s) return NULL;
        void *stream = (void *)(uintptr_t)PyLong_AsUnsignedLongLong(s);
        Py_DECREF(s);
        if (stream != k->stream) {
            if (k->set_stream(k->ctx, stream) != 0) return PyErr_Format(PyExc_RuntimeError, "setting the stream");
            k->stream = stream;
        }
    }
    PyObject *shape = Py_BuildValue("(nn)", rows, cols);
    PyObject *y = shape ? PyObject_CallFunctionObjArgs(k->empty, shape, k->dtype, NULL) : NULL;
    Py_XDECREF(shape);
    if (!y) return NULL;
    if (k->cupy) {
        PyObject *data = PyObject_GetAttrString(y, "data");
        PyObject *p = data ? PyObject_GetAttrString(data, "ptr") : NULL;
        Py_XDECREF(data);
        if (!p) return Py_DECREF(y), NULL;
        out = (uintptr_t)PyLong_AsUnsignedLongLong(p);
        Py_DECREF(p);
    } else {
        if (PyObject_GetBuffer(y, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return Py_DECREF(y), NULL;
        out = (uintptr_t)view.buf;
        PyBuffer_Release(&view);
    }
    const int s = k->conv2d_mode(k->ctx, NULL, (const float *)in, (size_t)rows, (size_t)cols, k->filter, k->krows,
                                 k->kcols, k->mode, k->cval, k->origin_r, k->origin_c, (float *)out);
    if (s != 0) {
        Py_DECREF(y);
        return PyErr_Format(PyExc_RuntimeError, "mh_conv2d_mode: status %d", s);
    }
    return y;
}

static PyTypeObject KeptType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "_compiled_entry.Kept",
    .tp_basicsize = sizeof(Kept),
    .tp_dealloc = (destructor)kept_dealloc,
    .tp_call = (ternaryfunc)kept_call,
    .tp_flags = Py_TPFLAGS_DEFAULT,
};

/* kept(conv2d_mode, set_stream, ctx, filter, krows, kcols, mode, cval, origin_r, origin_c, empty, dtype,
 * stream_of, cupy): the addresses as ints (ctypes gives them); the filter on the image's device
 * (the caller keeps it alive); stream_of None on the CPU backend. */
static PyObject *make_kept(PyObject *self, PyObject *args)
{
    unsigned long long fn, set_stream, ctx, filter;
    Py_ssize_t krows, kcols;
    int mode, cupy;
    float cval;
    long long o_r, o_c;
    PyObject *empty, *dtype, *stream_of;
    if (!PyArg_ParseTuple(args, "KKKKnnifLLOOOp", &fn, &set_stream, &ctx, &filter, &krows, &kcols, &mode, &cval, &o_r,
                          &o_c, &empty, &dtype, &stream_of, &cupy))
        return NULL;
    Kept *k = PyObject_New(Kept, &KeptType);
    if (!k) return NULL;
    k->conv2d_mode = (conv2d_mode_fn)(uintptr_t)fn, k->set_stream = (set_stream_fn)(uintptr_t)set_stream;
    k->ctx = (void *)(uintptr_t)ctx, k->stream = NULL;
    k->filter = (const float *)(uintptr_t)filter, k->krows = (size_t)krows, k->kcols = (size_t)kcols;
    k->mode = mode, k->cval = cval, k->origin_r = o_r, k->origin_c = o_c, k->cupy = cupy;
    Py_INCREF(empty), Py_INCREF(dtype);
    k->empty = empty, k->dtype = dtype;
    k->stream_of = stream_of == Py_None ? NULL : (Py_INCREF(stream_of), stream_of);
    return (PyObject *)k;
}

static PyMethodDef methods[] = {{"kept", make_kept, METH_VARARGS, "a kept correlate call"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_compiled_entry", NULL, -1, methods};

PyMODINIT_FUNC PyInit__compiled_entry(void)
{
    if (PyType_Ready(&KeptType) < 0) return NULL;
    return PyModule_Create(&module);
}
