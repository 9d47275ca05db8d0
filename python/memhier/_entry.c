/* memhier._entry: the compiled entry of memhier.ndimage's filters (the rank filters too) and of
 * memhier's conv1d, conv2d, reduce_sum and bincount (issue 64: the everyday call). A call whose
 * arguments equal an earlier call's, where that call was one library call into its output (a new
 * one, or the caller's `output` array), replays that call from C: the arguments keyed, the record
 * found, the caller's context and stream set, the output made (or the caller's checked: writable
 * and apart from the input) and the C library called, with no Python layer between. Everything else (a first call, a refusal, any argument the
 * key does not cover) runs the Python function, which may leave a record for the next call
 * (_fast.offer).
 *
 * The key of a call is the function and, for each parameter, its value's type and value: scalars
 * (None, bool, int, float, str, bytes), types and NumPy dtypes as they are, lists and tuples of
 * scalars item by item, a memhier.Context by identity, the input array and an `output` array by
 * kind, device, dtype, shape and contiguity (their data is read or written by the kernels, never
 * planned on; where they overlap the call runs in Python), other device arrays by
 * the same and their address (the kernels read them where they are), NumPy arrays of parameters
 * (the weights, and a parameter keyed by content alone, such as grey morphology's structure,
 * which the record copies) by dtype, shape and content. A value of any other kind makes no key:
 * the call runs in Python. Equal keys mean equal arguments to every check and plan the Python
 * path makes, so the record of one call is the call the Python path would make for the other.
 * Where the Python path offered a view with its record (the sizes the call passes as products of
 * the input's axes, for a call it makes alike for every shape of those axes), the record is kept
 * under a second key too, the call's with the arrays' shapes replaced by their number of axes
 * (by_axes), which a call of another shape looks up when its own key finds nothing: the record
 * serves it where its shape keeps the recorded sizes on the axes the view holds fixed (serves).
 * A loop over images of many sizes then replays one record. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "memhier.h"

#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- what Python gives at configure(): ----------------------------------------------------- */
static PyObject *KINDS;            /* dict: type -> "numpy", "cupy", "torch" or None, as met */
static PyObject *KIND_OF;          /* _arrays.kind_of(type): a type met for the first time */
static PyObject *RECORDS;          /* OrderedDict: key -> Record, at most 2 KEPT keys (a view's record has two) */
static PyObject *CONTEXT_TYPE;     /* memhier.Context */
static PyObject *DTYPE_TYPE;       /* numpy.dtype: dtypes are keyed as they are (output=...) */
static PyObject *CONTEXT_IN_PLACE; /* _call.context_in_place(place, context, precision) */
static PyObject *EMPTY_LIKE_KIND;  /* _convert.empty_like_kind(place, shape, dtype) */
static PyObject *CHECK;            /* _native.check(status, handle) */
static Py_ssize_t KEPT = 64;
static unsigned long long hits, misses, recorded;

static PyObject *S_NUMPY, *S_CUPY, *S_PENDING;

/* The attributes a replay reads, as interned names made once (a name made from a C string at
 * each lookup costs as much as the lookup). */
enum attr_name { A_KIND, A_DATA, A_PTR, A_DEVICE_ID, A_DTYPE, A_SHAPE, A_CUPY_C_CONTIGUOUS, A_FLAGS, A_C_CONTIGUOUS,
                 A_HANDLE, A_VALUE, A_NBYTES, ATTR_NAMES };
static const char *const attr_names[ATTR_NAMES] = {"kind",   "data",  "ptr",          "device_id", "dtype", "shape",
                                                   "_c_contiguous", "flags", "c_contiguous", "handle", "value",
                                                   "nbytes"};
static PyObject *ATTR[ATTR_NAMES];

enum call_shape {
    CONV2D_MODE, CONV2D_MODE_BATCHED, CONV2D_MODE_REVERSED, CONV2D_PLANNED_MODE, SEPFILTER, SEPFILTER_SUM, CONV2D,
    CONV1D, CONV1D_BATCHED, CONV1D_MODE, REDUCE_SUM, BINCOUNT, HISTOGRAM_RANGE, RANK, CALL_SHAPES
};
enum kind { KIND_NUMPY, KIND_CUPY, KIND_OTHER };

typedef int (*conv2d_mode_fn)(void *, const char *, const void *, size_t, size_t, const void *, size_t, size_t, int,
                              float, long long, long long, void *);
typedef int (*conv2d_mode_batched_fn)(void *, const char *, const void *, size_t, size_t, size_t, const void *, size_t,
                                      size_t, int, float, long long, long long, void *);
typedef int (*conv2d_planned_mode_fn)(void *, const char *, const void *, const void *, size_t, size_t, size_t, int,
                                      float, long long, long long, void *);
typedef int (*sepfilter_fn)(void *, const char *, const void *, const void *, void *);
typedef int (*sepfilter_sum_fn)(void *, const char *, const void *, size_t, const void *, void *);
typedef int (*conv2d_fn)(void *, const char *, const void *, size_t, size_t, const void *, size_t, size_t, int, void *);
typedef int (*conv1d_fn)(void *, const char *, const void *, size_t, const void *, size_t, int, void *);
typedef int (*conv1d_batched_fn)(void *, const char *, const void *, size_t, size_t, const void *, size_t, size_t, int,
                                 void *);
typedef int (*conv1d_mode_fn)(void *, const char *, const void *, size_t, size_t, const void *, size_t, size_t, int,
                              float, long long, void *);
typedef int (*reduce_sum_fn)(void *, const char *, const void *, size_t, void *);
typedef int (*bincount_fn)(void *, const char *, const void *, size_t, int, void *, void *);
typedef int (*histogram_range_fn)(void *, const char *, const void *, size_t, int, double, double, void *, void *,
                                  void *);

/* The most sizes a view derives from the input's shape: a sum of 8 sepfilter descs, 4 each. */
#define VIEW_MAX 32
#define VIEW_DESCS (VIEW_MAX / 4)

/* ---- a record: one library call, every argument fixed but the input's and output's address
 * (and, with a view, the sizes the input's shape gives) ------------------------------------------ */
typedef struct {
    PyObject_HEAD
    int shape;        /* enum call_shape */
    void *fn;         /* the library function */
    PyObject *variant; /* bytes, or None for auto */
    Py_ssize_t sizes[3]; /* batch, rows, cols (conv2d); batch, n (conv1d); n (reduce_sum, bincount) */
    void *fixed;      /* the weights' address, the plan or the sepfilter desc */
    int weights_in_call; /* the weights are the call's own (their address read each call), not fixed */
    Py_ssize_t krows, kcols, stride; /* the filter's sides (conv1d: k in kcols), conv1d's mask stride */
    int mode;         /* the mode, or the pad for conv1d and conv2d */
    float cval;
    long long origin_r, origin_c;
    PyObject *place;     /* where the call runs: .kind, .device (context_in_place, empty_like_kind) */
    int kind;            /* the place's kind */
    long device;         /* the place's device */
    PyObject *make;      /* make(shape, dtype): a new output where the current device is the place's */
    PyObject *device_now; /* the current device's index (CuPy), or None (NumPy: no device) */
    PyObject *context;   /* the caller's memhier.Context, or None (the thread's) */
    PyObject *precision; /* the contract set on the context */
    PyObject *out_shape, *out_dtype;
    PyObject *keep;      /* what the fixed addresses point into, kept alive with the record */
    PyObject *first_output; /* the output of the call that offered it, until it is kept */
    PyObject *second_shape, *second_dtype; /* a second output the call writes (mh_histogram_range's
                                              edges; the result is then the tuple of both), or None */
    PyObject *first_second; /* the offered call's second output, until it is kept */
    int into_given;         /* the call writes the caller's `output` array, not a new one */
    PyObject *in_shape;     /* the shape of the input the record was made for (a view's fixed sides) */
    int view_n;             /* 0: the record serves in_shape alone; else how many sizes view gives */
    unsigned char view[VIEW_MAX][2]; /* size i: the product of the input's shape[view[i][0]:view[i][1]]:
                                        batch, rows, cols (conv2d's forms), batch, n (conv1d's), each
                                        desc's batch, rows, cols, channels (sepfilter's), the desc's
                                        batch, rows, cols, channels, depth (rank's), or 1, n (reduce_sum,
                                        the histograms) */
    Py_ssize_t view_fixed;  /* the axes from here on keep in_shape's sizes (a view's record) */
    int view_out_fixed;     /* a view's outputs keep their shapes (a sum, counts), not the input's */
} Record;

static void record_dealloc(Record *r)
{
    Py_XDECREF(r->variant);
    Py_XDECREF(r->place);
    Py_XDECREF(r->make);
    Py_XDECREF(r->device_now);
    Py_XDECREF(r->context);
    Py_XDECREF(r->precision);
    Py_XDECREF(r->out_shape);
    Py_XDECREF(r->out_dtype);
    Py_XDECREF(r->keep);
    Py_XDECREF(r->first_output);
    Py_XDECREF(r->second_shape);
    Py_XDECREF(r->second_dtype);
    Py_XDECREF(r->first_second);
    Py_XDECREF(r->in_shape);
    Py_TYPE(r)->tp_free((PyObject *)r);
}

static int kind_code(PyObject *kind)
{
    if (PyUnicode_Check(kind) && PyUnicode_Compare(kind, S_NUMPY) == 0) return KIND_NUMPY;
    if (PyUnicode_Check(kind) && PyUnicode_Compare(kind, S_CUPY) == 0) return KIND_CUPY;
    return KIND_OTHER;
}

/* How many sizes a view gives for a call form (0: the form takes no view); descs: a sum's. */
static int view_sizes_of(int shape, Py_ssize_t descs)
{
    switch (shape) {
    case CONV2D_MODE:
    case CONV2D_MODE_BATCHED:
    case CONV2D_MODE_REVERSED:
    case CONV2D_PLANNED_MODE:
    case CONV2D:
        return 3;
    case CONV1D:
    case CONV1D_BATCHED:
    case CONV1D_MODE:
    case REDUCE_SUM:
    case BINCOUNT:
    case HISTOGRAM_RANGE:
        return 2;
    case SEPFILTER:
        return 4;
    case SEPFILTER_SUM:
        return descs >= 1 && descs <= VIEW_DESCS ? 4 * (int)descs : 0;
    case RANK:
        return 5;
    default:
        return 0;
    }
}

/* Sets record r's view from Python's: a tuple of (lo, hi) axis pairs flattened, one pair for each
 * size the form passes, the first axis whose size stays the recorded one, and whether the outputs
 * keep their shapes (out_fixed: a sum, counts); otherwise the call's one output has the input's
 * shape. */
static int record_view(Record *r, int shape, Py_ssize_t descs, PyObject *view, Py_ssize_t fixed, int out_fixed,
                       PyObject *out_shape, PyObject *second_shape)
{
    const Py_ssize_t ndim = PyTuple_GET_SIZE(r->in_shape);
    const int n = view_sizes_of(shape, descs);
    int same = PyObject_RichCompareBool(out_shape, r->in_shape, Py_EQ);
    if (same < 0) return -1;
    int ok = (out_fixed || (same && second_shape == Py_None)) && n > 0 && ndim <= UCHAR_MAX && PyTuple_Check(view) &&
             PyTuple_GET_SIZE(view) == 2 * n && fixed >= 0 && fixed <= ndim;
    for (int i = 0; ok && i < 2 * n; ++i) {
        const Py_ssize_t axis = PyLong_AsSsize_t(PyTuple_GET_ITEM(view, i));
        if (axis == -1 && PyErr_Occurred()) return -1;
        ok = axis >= 0 && axis <= ndim && (i % 2 == 0 || axis >= r->view[i / 2][0]);
        r->view[i / 2][i % 2] = (unsigned char)(ok ? axis : 0);
    }
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "Record: a view is a (lo, hi) pair of the input's axes for each size its "
                                          "call form passes (conv2d's 3, conv1d's 2, sepfilter's 4 a desc, at "
                                          "most 8 descs, rank's 5, 2 for reduce_sum and the histograms), lo <= "
                                          "hi, the first fixed axis within the input's, and an output of the "
                                          "input's shape alone unless the outputs keep theirs");
        return -1;
    }
    r->view_n = n, r->view_fixed = fixed, r->view_out_fixed = out_fixed;
    return 0;
}

static PyObject *record_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"shape", "fn", "variant", "batch", "rows", "cols", "fixed", "weights_in_call", "krows",
                            "kcols", "stride", "mode", "cval", "origin_r", "origin_c", "place", "make",
                            "device_now", "context", "precision", "out_shape", "out_dtype", "keep", "first_output",
                            "second_shape", "second_dtype", "first_second", "in_shape", "view", "view_fixed",
                            "view_out_fixed", NULL};
    int shape, mode, weights_in_call;
    PyObject *fn_address, *fixed_address;
    Py_ssize_t batch, rows, cols, krows, kcols, stride;
    float cval;
    long long origin_r, origin_c;
    PyObject *variant, *place, *make, *device_now, *context, *precision, *out_shape, *out_dtype, *keep, *first_output;
    PyObject *second_shape, *second_dtype, *first_second, *in_shape, *view;
    Py_ssize_t view_fixed;
    int view_out_fixed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOOnnnOpnnnifLLOOOOOOOOOOOOO!Onp", names, &shape, &fn_address,
                                     &variant, &batch, &rows, &cols, &fixed_address, &weights_in_call, &krows, &kcols,
                                     &stride, &mode, &cval, &origin_r, &origin_c, &place, &make, &device_now, &context,
                                     &precision, &out_shape, &out_dtype, &keep, &first_output, &second_shape,
                                     &second_dtype, &first_second, &PyTuple_Type, &in_shape, &view, &view_fixed,
                                     &view_out_fixed))
        return NULL;
    void *fn = PyLong_AsVoidPtr(fn_address), *fixed = PyLong_AsVoidPtr(fixed_address); /* range-checked */
    if (PyErr_Occurred()) return NULL;
    if (shape < 0 || shape >= CALL_SHAPES || !fn || (variant != Py_None && !PyBytes_Check(variant)) ||
        batch < 0 || rows < 0 || cols < 0 || krows < 0 || kcols < 0 || stride < 0 || !PyTuple_Check(out_shape) ||
        (second_shape != Py_None && !PyTuple_Check(second_shape)) || !PyCallable_Check(make) ||
        (device_now != Py_None && !PyCallable_Check(device_now)) ||
        (shape == HISTOGRAM_RANGE && (!fixed || second_shape == Py_None))) {
        PyErr_SetString(PyExc_ValueError, "Record: a call shape, a function, bytes or None for the variant, "
                                          "sizes >= 0, the output's shape as a tuple, None or a tuple for the second "
                                          "output's, make and device_now callable (device_now None: NumPy), "
                                          "a histogram's range at fixed and its edges' shape");
        return NULL;
    }
    PyObject *kind = PyObject_GetAttr(place, ATTR[A_KIND]);
    if (!kind) return NULL;
    const int code = kind_code(kind);
    Py_DECREF(kind);
    PyObject *dev = PyObject_GetAttrString(place, "device");
    const long device = dev ? PyLong_AsLong(dev) : -1;
    Py_XDECREF(dev);
    if (PyErr_Occurred()) return NULL;
    if (code == KIND_OTHER) {
        PyErr_SetString(PyExc_ValueError, "Record: replays run on NumPy and CuPy arrays");
        return NULL;
    }
    Record *r = (Record *)type->tp_alloc(type, 0);
    if (!r) return NULL;
    Py_INCREF(in_shape), r->in_shape = in_shape;
    if (view != Py_None &&
        record_view(r, shape, krows, view, view_fixed, view_out_fixed, out_shape, second_shape) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    r->shape = shape, r->fn = fn, r->fixed = fixed;
    r->sizes[0] = batch, r->sizes[1] = rows, r->sizes[2] = cols;
    r->weights_in_call = weights_in_call, r->krows = krows, r->kcols = kcols, r->stride = stride;
    r->mode = mode, r->cval = cval;
    r->origin_r = origin_r, r->origin_c = origin_c, r->kind = code, r->device = device;
    Py_INCREF(make), r->make = make;
    Py_INCREF(device_now), r->device_now = device_now;
    Py_INCREF(variant), r->variant = variant;
    Py_INCREF(place), r->place = place;
    Py_INCREF(context), r->context = context;
    Py_INCREF(precision), r->precision = precision;
    Py_INCREF(out_shape), r->out_shape = out_shape;
    Py_INCREF(out_dtype), r->out_dtype = out_dtype;
    Py_INCREF(keep), r->keep = keep;
    Py_INCREF(first_output), r->first_output = first_output;
    Py_INCREF(second_shape), r->second_shape = second_shape;
    Py_INCREF(second_dtype), r->second_dtype = second_dtype;
    Py_INCREF(first_second), r->first_second = first_second;
    return (PyObject *)r;
}

static PyTypeObject RecordType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "memhier._entry.Record",
    .tp_basicsize = sizeof(Record),
    .tp_dealloc = (destructor)record_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One library call of a kept filter, replayed with a new input and output.",
    .tp_new = record_new,
};

/* ---- the entry: a callable in place of a Python function (below) ------------------------- */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *slow;        /* the Python function */
    PyObject *names;       /* its parameters' names, in order */
    PyObject *defaults;    /* each one's default, or REQUIRED */
    Py_ssize_t positional; /* how many may be given by position (the rest are keyword-only) */
    Py_ssize_t weights;    /* the position of the weights (keyed by content or place), or -1 */
    Py_ssize_t content;    /* the position of a parameter keyed by content alone (NumPy arrays), or -1 */
    Py_ssize_t output;     /* the position of scipy's `output` (None, a dtype or an array to write), or -1 */
} Entry;

/* ---- reading arrays ------------------------------------------------------------------------- */

static PyObject *attr(PyObject *o, enum attr_name name) { return PyObject_GetAttr(o, ATTR[name]); }

/* A CuPy array's address and device (its .data). */
static int cupy_place(PyObject *a, void **ptr, long *device)
{
    PyObject *data = attr(a, A_DATA);
    if (!data) return -1;
    PyObject *p = attr(data, A_PTR), *d = p ? attr(data, A_DEVICE_ID) : NULL;
    Py_DECREF(data);
    if (!d) {
        Py_XDECREF(p);
        return -1;
    }
    *ptr = PyLong_AsVoidPtr(p);
    *device = PyLong_AsLong(d);
    Py_DECREF(p);
    Py_DECREF(d);
    return PyErr_Occurred() ? -1 : 0;
}

/* (dtype, shape, C-contiguous) of an array of a kind, as new references in out[0..2]. CuPy's
 * `_c_contiguous` is the flag its `flags.c_contiguous` reads, without the Flags object that
 * property makes each time (a tenth of its cost on the H200's host); NumPy's through `flags`. */
static int array_meta(PyObject *a, int kind, PyObject **out)
{
    out[0] = attr(a, A_DTYPE);
    out[1] = out[0] ? attr(a, A_SHAPE) : NULL;
    if (out[1] && kind == KIND_CUPY) {
        out[2] = attr(a, A_CUPY_C_CONTIGUOUS);
    } else if (out[1]) {
        PyObject *flags = attr(a, A_FLAGS);
        out[2] = flags ? attr(flags, A_C_CONTIGUOUS) : NULL;
        Py_XDECREF(flags);
    } else {
        out[2] = NULL;
    }
    if (out[2]) return 0;
    Py_CLEAR(out[0]);
    Py_CLEAR(out[1]);
    return -1;
}

/* The key part of an array argument; a device array's address in *place (the replay reads it
 * from there). is_data: the input or the output, keyed without their address or content, their
 * shape (a tuple; by_axes finds it in the part) given in *shape as a new reference. */
static PyObject *array_key(PyObject *a, int kind, int is_data, void **place, PyObject **shape)
{
    PyObject *meta[3];
    if (array_meta(a, kind, meta) < 0) return NULL;
    PyObject *key = NULL;
    if (is_data) {
        if (!PyTuple_Check(meta[1])) {
            for (int i = 0; i < 3; ++i) Py_DECREF(meta[i]);
            return NULL; /* a shape that is no tuple: the Python path reads it */
        }
        Py_INCREF(meta[1]);
        *shape = meta[1];
    }
    if (kind == KIND_NUMPY) {
        if (is_data) {
            key = PyTuple_Pack(3, meta[0], meta[1], meta[2]);
        } else { /* a parameter: its content (C-contiguous only; others make no key) */
            Py_buffer view;
            if (PyObject_GetBuffer(a, &view, PyBUF_C_CONTIGUOUS) == 0) {
                PyObject *bytes = PyBytes_FromStringAndSize(view.buf, view.len);
                PyBuffer_Release(&view);
                if (bytes) key = PyTuple_Pack(3, meta[0], meta[1], bytes);
                Py_XDECREF(bytes);
            }
        }
    } else {
        void *ptr;
        long device;
        if (cupy_place(a, &ptr, &device) == 0) {
            PyObject *dev = PyLong_FromLong(device);
            PyObject *address = is_data ? NULL : PyLong_FromVoidPtr(ptr);
            if (dev && (is_data || address))
                key = is_data ? PyTuple_Pack(4, dev, meta[0], meta[1], meta[2])
                              : PyTuple_Pack(5, dev, meta[0], meta[1], meta[2], address);
            Py_XDECREF(dev);
            Py_XDECREF(address);
            *place = ptr;
        }
    }
    for (int i = 0; i < 3; ++i) Py_DECREF(meta[i]);
    if (!key && is_data) Py_CLEAR(*shape);
    return key;
}

static int array_kind(PyObject *v)
{
    PyObject *kind = PyDict_GetItemWithError(KINDS, (PyObject *)Py_TYPE(v));
    if (kind) return kind_code(kind);
    if (PyErr_Occurred()) return -1;
    kind = PyObject_CallOneArg(KIND_OF, (PyObject *)Py_TYPE(v)); /* a type met for the first time */
    const int code = kind ? kind_code(kind) : -1;
    Py_XDECREF(kind);
    return code;
}

/* A scalar a key holds as it is. -0.0 makes none: it equals 0.0 as a key, where a result can keep
 * its sign (numpy's last edge of the range (-1, -0.0) is -0.0). */
static int plain_scalar(PyObject *v)
{
    if (PyFloat_CheckExact(v)) return PyFloat_AS_DOUBLE(v) != 0.0 || !signbit(PyFloat_AS_DOUBLE(v));
    return v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyUnicode_CheckExact(v) || PyBytes_CheckExact(v);
}

enum part { NO_KEY, AS_IT_IS, ITEMS, ARRAY };

/* How a value is keyed, from its type alone (nothing read from an array yet, so a call that
 * makes no key costs little): as it is (scalars, types, dtypes, a memhier.Context), item by
 * item (lists and tuples of scalars), as an array (the input and an output array, the weights
 * where the entry keys them, the content parameter where it is a NumPy array), or not at all. */
static enum part part_of(PyObject *v, int is_data, int is_weights, int is_content)
{
    if (plain_scalar(v) || Py_TYPE(v) == (PyTypeObject *)CONTEXT_TYPE || PyType_Check(v) ||
        PyObject_TypeCheck(v, (PyTypeObject *)DTYPE_TYPE))
        return AS_IT_IS;
    if (PyList_CheckExact(v) || PyTuple_CheckExact(v)) {
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); ++i)
            if (!plain_scalar(PySequence_Fast_GET_ITEM(v, i))) return NO_KEY;
        return ITEMS;
    }
    const int kind = array_kind(v);
    PyErr_Clear();
    return ((kind == KIND_NUMPY || kind == KIND_CUPY) && (is_data || is_weights)) || (kind == KIND_NUMPY && is_content)
               ? ARRAY
               : NO_KEY;
}

static PyObject *items_key(PyObject *v)
{
    const Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
    PyObject *key = PyTuple_New(2 * n);
    if (!key) return NULL;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *item = PySequence_Fast_GET_ITEM(v, i);
        Py_INCREF(Py_TYPE(item));
        Py_INCREF(item);
        PyTuple_SET_ITEM(key, 2 * i, (PyObject *)Py_TYPE(item));
        PyTuple_SET_ITEM(key, 2 * i + 1, item);
    }
    return key;
}

/* The key of a call: the entry, then each parameter's type and key part; NULL with no error
 * set where some value makes no key (the types looked at first, the arrays read last). The CuPy
 * addresses the key reads go to *input_ptr, *weights_ptr and *output_ptr, and *given is the
 * caller's output array where the entry has an `output` and the call passes an array there;
 * the input's shape and the given array's go to shapes[0] and shapes[1] (new references, NULL
 * where there is none, both cleared where no key is made). */
static PyObject *call_key(const Entry *e, PyObject *const *values, Py_ssize_t n, void **input_ptr,
                          void **weights_ptr, void **output_ptr, PyObject **given, PyObject **shapes)
{
    enum part parts[32];
    for (Py_ssize_t i = 0; i < n; ++i)
        if ((parts[i] = part_of(values[i], i == 0 || i == e->output, i == e->weights, i == e->content)) == NO_KEY)
            return NULL;
    PyObject *key = PyTuple_New(1 + 2 * n);
    if (!key) return NULL;
    Py_INCREF(e);
    PyTuple_SET_ITEM(key, 0, (PyObject *)e);
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *v = values[i], *part;
        if (parts[i] == AS_IT_IS) {
            Py_INCREF(v);
            part = v;
        } else if (parts[i] == ITEMS) {
            part = items_key(v);
        } else {
            part = array_key(v, array_kind(v), i == 0 || i == e->output,
                             i == 0 ? input_ptr : i == e->output ? output_ptr : weights_ptr,
                             &shapes[i == 0 ? 0 : 1]);
            if (i == e->output) *given = v;
            if (!part) PyErr_Clear(); /* an array that reads otherwise: the Python path says what */
        }
        if (!part) {
            Py_DECREF(key);
            Py_CLEAR(shapes[0]);
            Py_CLEAR(shapes[1]);
            return NULL;
        }
        Py_INCREF(Py_TYPE(v));
        PyTuple_SET_ITEM(key, 1 + 2 * i, (PyObject *)Py_TYPE(v));
        PyTuple_SET_ITEM(key, 2 + 2 * i, part);
    }
    return key;
}

/* ---- replaying a record ----------------------------------------------------------------------- */

/* The address of an array the call writes (a CuPy address the key read is already in *ptr). */
static int output_address(const Record *r, PyObject *y, void **ptr)
{
    if (r->kind == KIND_CUPY) {
        long device;
        return *ptr ? 0 : cupy_place(y, ptr, &device);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(y, &view, PyBUF_C_CONTIGUOUS | PyBUF_WRITABLE) < 0) return -1;
    *ptr = view.buf;
    PyBuffer_Release(&view); /* the array keeps its memory: the result holds it */
    return 0;
}

/* The address of an array the call reads (a CuPy address the key read is already in *ptr). */
static int input_address(const Record *r, PyObject *x, void **ptr)
{
    if (r->kind == KIND_CUPY) {
        long device;
        return *ptr ? 0 : cupy_place(x, ptr, &device);
    }
    Py_buffer view;
    if (PyObject_GetBuffer(x, &view, PyBUF_C_CONTIGUOUS) < 0) return -1;
    *ptr = view.buf;
    PyBuffer_Release(&view);
    return 0;
}

/* The record's library call; sizes: batch, rows, cols (the record's, or its view's of this input). */
static int library_call(const Record *r, const size_t *sizes, void *handle, const void *in, const void *w, void *out,
                        void *second)
{
    const char *variant = r->variant == Py_None ? NULL : PyBytes_AS_STRING(r->variant);
    const size_t batch = sizes[0], rows = sizes[1], cols = sizes[2];
    const size_t krows = (size_t)r->krows, kcols = (size_t)r->kcols, stride = (size_t)r->stride;
    int status;
    Py_BEGIN_ALLOW_THREADS
    switch (r->shape) {
    case CONV2D_MODE:
        status = ((conv2d_mode_fn)r->fn)(handle, variant, in, rows, cols, w, krows, kcols, r->mode, r->cval,
                                         r->origin_r, r->origin_c, out);
        break;
    case CONV2D_MODE_BATCHED:
    case CONV2D_MODE_REVERSED: /* mh_conv2d_mode_reversed takes mh_conv2d_mode_batched's arguments */
        status = ((conv2d_mode_batched_fn)r->fn)(handle, variant, in, batch, rows, cols, w, krows, kcols, r->mode,
                                                 r->cval, r->origin_r, r->origin_c, out);
        break;
    case CONV2D_PLANNED_MODE:
        status = ((conv2d_planned_mode_fn)r->fn)(handle, variant, w, in, batch, rows, cols, r->mode, r->cval,
                                                 r->origin_r, r->origin_c, out);
        break;
    case SEPFILTER:
    case RANK: /* mh_rank takes mh_sepfilter's arguments: a desc at w, in, out */
        status = ((sepfilter_fn)r->fn)(handle, variant, w, in, out);
        break;
    case SEPFILTER_SUM: /* mh_sepfilter_sum: the terms' descs at w, their count in krows */
        status = ((sepfilter_sum_fn)r->fn)(handle, variant, w, krows, in, out);
        break;
    case CONV2D:
        status = ((conv2d_fn)r->fn)(handle, variant, in, rows, cols, w, krows, kcols, r->mode, out);
        break;
    case CONV1D:
        status = ((conv1d_fn)r->fn)(handle, variant, in, rows, w, kcols, r->mode, out);
        break;
    case CONV1D_BATCHED:
        status = ((conv1d_batched_fn)r->fn)(handle, variant, in, batch, rows, w, stride, kcols, r->mode, out);
        break;
    case CONV1D_MODE:
        status = ((conv1d_mode_fn)r->fn)(handle, variant, in, batch, rows, w, stride, kcols, r->mode, r->cval,
                                         r->origin_r, out);
        break;
    case BINCOUNT: /* mh_histogram: the bins in kcols (checked to 2^20), the outside count not asked for */
        status = ((bincount_fn)r->fn)(handle, variant, in, rows, (int)kcols, out, NULL);
        break;
    case HISTOGRAM_RANGE: /* mh_histogram_range: the bins in kcols, the range's two doubles at w */
        status = ((histogram_range_fn)r->fn)(handle, variant, in, rows, (int)kcols, ((const double *)w)[0],
                                             ((const double *)w)[1], out, NULL, second);
        break;
    default:
        status = ((reduce_sum_fn)r->fn)(handle, variant, in, rows, out);
    }
    Py_END_ALLOW_THREADS
    return status;
}

/* A new output of the record's place: make(shape, dtype) where the current device is the
 * place's (CuPy places an array on the current device), else empty_like_kind, which selects it. */
static PyObject *new_output(const Record *r, PyObject *shape, PyObject *dtype)
{
    if (r->device_now != Py_None) {
        PyObject *now = PyObject_CallNoArgs(r->device_now);
        if (!now) return NULL;
        const long d = PyLong_AsLong(now);
        Py_DECREF(now);
        if (d == -1 && PyErr_Occurred()) return NULL;
        if (d != r->device) return PyObject_CallFunctionObjArgs(EMPTY_LIKE_KIND, r->place, shape, dtype, NULL);
    }
    PyObject *args[2] = {shape, dtype};
    return PyObject_Vectorcall(r->make, args, 2, NULL);
}

/* An array's size in bytes (its nbytes). */
static int nbytes_of(PyObject *a, Py_ssize_t *n)
{
    PyObject *v = attr(a, A_NBYTES);
    if (!v) return -1;
    *n = PyLong_AsSsize_t(v);
    Py_DECREF(v);
    return PyErr_Occurred() ? -1 : 0;
}

/* Whether the caller's output array y takes the record's call as the Python path would write it:
 * writable (NumPy) and apart from the input x (both C-contiguous, as their key says); their
 * addresses in *out_ptr and *in_ptr (CuPy's already there, as the key read them). 1 where
 * it does, 0 (any error cleared) where the call is the Python path's to make. */
static int given_output_apart(const Record *r, PyObject *y, PyObject *x, void **in_ptr, void **out_ptr)
{
    Py_ssize_t ybytes, xbytes;
    if (output_address(r, y, out_ptr) < 0 || input_address(r, x, in_ptr) < 0 || nbytes_of(y, &ybytes) < 0 ||
        nbytes_of(x, &xbytes) < 0) {
        PyErr_Clear();
        return 0;
    }
    const uintptr_t a = (uintptr_t)*out_ptr, b = (uintptr_t)*in_ptr;
    return a + (uintptr_t)ybytes <= b || b + (uintptr_t)xbytes <= a;
}

/* Whether record r, found under a key of this call, serves its input of this shape into the
 * caller's output array of given_shape (NULL: a new output). A record without a view is kept
 * under its own call's key alone, which holds both shapes: it serves. A view's record serves any
 * shape of its number of axes with in_shape's sizes from view_fixed on and no axis of size 0
 * (where the Python path makes no library call), into the caller's output of the shape the record
 * writes. -1 with an exception set where a shape does not read. */
static int serves(const Record *r, PyObject *shape, PyObject *given_shape)
{
    if (!r->view_n) return 1;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape); ++i) {
        const Py_ssize_t side = PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, i));
        if (side == -1 && PyErr_Occurred()) return -1;
        if (side <= 0 || (i >= r->view_fixed && side != PyLong_AsSsize_t(PyTuple_GET_ITEM(r->in_shape, i))))
            return 0;
    }
    return given_shape ? PyObject_RichCompareBool(given_shape, r->view_out_fixed ? r->out_shape : shape, Py_EQ) : 1;
}

/* The sizes of a view's record for an input of this shape (serves: every side a positive
 * Py_ssize_t, and their product the array's size, so no product overflows). */
static void view_sizes(const Record *r, PyObject *shape, size_t *sizes)
{
    for (int i = 0; i < r->view_n; ++i) {
        size_t p = 1;
        for (int a = r->view[i][0]; a < r->view[i][1]; ++a) p *= (size_t)PyLong_AsSsize_t(PyTuple_GET_ITEM(shape, a));
        sizes[i] = p;
    }
}

/* A view's sepfilter descs for this input: copies of the record's with their sizes (the kept
 * descs are shared and never written). */
static void view_descs(const Record *r, const size_t *sizes, mh_sepfilter_desc *descs)
{
    const int n = r->view_n / 4;
    memcpy(descs, r->fixed, (size_t)n * sizeof *descs);
    for (int d = 0; d < n; ++d) {
        descs[d].batch = sizes[4 * d], descs[d].rows = sizes[4 * d + 1];
        descs[d].cols = sizes[4 * d + 2], descs[d].channels = sizes[4 * d + 3];
    }
}

/* A view's rank desc for this input: a copy of the record's with its sizes. */
static void view_rank_desc(const Record *r, const size_t *sizes, mh_rank_desc *desc)
{
    memcpy(desc, r->fixed, sizeof *desc);
    desc->batch = sizes[0], desc->rows = sizes[1], desc->cols = sizes[2], desc->channels = sizes[3];
    desc->depth = sizes[4];
}

/* The record's call on input x of this shape and, where the record takes them from the call,
 * weights w (their CuPy addresses in_ptr and w_in_call, as the key read them; NULL for NumPy
 * arrays): the context as the Python path sets it, a new output (and a second one where the call
 * writes two) or the caller's, given (its address at given_ptr, given_output_apart), the library
 * call with the record's sizes or its view's; its exception where it fails. */
static PyObject *replay(const Record *r, PyObject *x, PyObject *shape, void *in_ptr, PyObject *w, void *w_in_call,
                        PyObject *given, void *given_ptr)
{
    size_t sizes[VIEW_MAX] = {(size_t)r->sizes[0], (size_t)r->sizes[1], (size_t)r->sizes[2]};
    mh_sepfilter_desc descs[VIEW_DESCS];
    mh_rank_desc rank;
    const void *fixed = r->fixed;
    PyObject *out_shape = r->out_shape;
    if (r->view_n) {
        view_sizes(r, shape, sizes);
        out_shape = r->view_out_fixed ? r->out_shape : shape;
        if (r->shape == SEPFILTER || r->shape == SEPFILTER_SUM) {
            view_descs(r, sizes, descs);
            fixed = descs;
        } else if (r->shape == RANK) {
            view_rank_desc(r, sizes, &rank);
            fixed = &rank;
        }
    }
    PyObject *ctx = PyObject_CallFunctionObjArgs(CONTEXT_IN_PLACE, r->place, r->context, r->precision, NULL);
    if (!ctx) return NULL;
    PyObject *handle = attr(ctx, A_HANDLE);
    Py_DECREF(ctx);
    if (!handle) return NULL;
    PyObject *value = attr(handle, A_VALUE);
    void *h = value ? PyLong_AsVoidPtr(value) : NULL;
    Py_XDECREF(value);
    PyObject *y = PyErr_Occurred() ? NULL
                  : given          ? (Py_INCREF(given), given)
                                   : new_output(r, out_shape, r->out_dtype);
    PyObject *y2 = !y || r->second_shape == Py_None ? NULL : new_output(r, r->second_shape, r->second_dtype);
    void *out_ptr = given_ptr, *out2_ptr = NULL, *w_ptr = r->weights_in_call ? w_in_call : (void *)fixed;
    if (y && ((r->second_shape != Py_None && (!y2 || output_address(r, y2, &out2_ptr) < 0)) ||
              (!given && output_address(r, y, &out_ptr) < 0) || input_address(r, x, &in_ptr) < 0 ||
              (r->weights_in_call && (!w || input_address(r, w, &w_ptr) < 0))))
        Py_CLEAR(y);
    if (y) {
        const int status = library_call(r, sizes, h, in_ptr, w_ptr, out_ptr, out2_ptr);
        if (status != 0) {
            PyObject *raised = PyObject_CallFunction(CHECK, "iO", status, handle);
            Py_XDECREF(raised);
            if (!PyErr_Occurred()) PyErr_Format(PyExc_RuntimeError, "memhier: status %d", status);
            Py_CLEAR(y);
        }
    }
    Py_DECREF(handle);
    if (y && y2) {
        PyObject *both = PyTuple_Pack(2, y, y2);
        Py_DECREF(y);
        y = both;
    }
    Py_XDECREF(y2);
    return y;
}

/* ---- the pending record of the call in progress on this thread -------------------------------- */
/* A list [record or None, spoiled]: _fast.offer sets the record, a second offer or any nested
 * entry call spoils it (the call then did more than one library call). */

static PyObject *pending_get(void)
{
    PyObject *d = PyThreadState_GetDict();
    return d ? PyDict_GetItemWithError(d, S_PENDING) : NULL; /* borrowed */
}

/* Sets (or with NULL clears) this thread's pending record; an exception already raised (the
 * Python function's) stays raised. */
static int pending_set(PyObject *p)
{
    PyObject *type, *value, *traceback;
    PyErr_Fetch(&type, &value, &traceback);
    PyObject *d = PyThreadState_GetDict();
    int rc = -1;
    if (d) {
        rc = p ? PyDict_SetItem(d, S_PENDING, p) : 0;
        if (!p && PyDict_GetItemWithError(d, S_PENDING)) rc = PyDict_DelItem(d, S_PENDING);
    }
    if (type) {
        PyErr_Clear();
        PyErr_Restore(type, value, traceback);
    }
    return rc;
}

static int spoil(PyObject *p) { return p && p != Py_None ? PyList_SetItem(p, 1, (Py_INCREF(Py_True), Py_True)) : 0; }

static PyObject *entry_pending(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    PyObject *p = pending_get();
    if (!p) {
        if (PyErr_Occurred()) return NULL;
        Py_RETURN_NONE;
    }
    Py_INCREF(p);
    return p;
}

/* The key a view's record is kept by beside the call's own: the call's key with the shape of the
 * input (and of the caller's output array, where given) replaced by its number of axes. A data
 * array's part is (dtype, shape, contiguity), or (device, dtype, shape, contiguity) for CuPy:
 * the shape is its last item but one. */
static PyObject *by_axes(const Entry *e, PyObject *key, int given)
{
    const Py_ssize_t n = PyTuple_GET_SIZE(key);
    PyObject *axes_key = PyTuple_New(n);
    if (!axes_key) return NULL;
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *item = PyTuple_GET_ITEM(key, i);
        const int data = i == 2 || (given && i == 2 + 2 * e->output);
        if (data) { /* a new part: the key's own is shared */
            const Py_ssize_t m = PyTuple_GET_SIZE(item);
            PyObject *part = PyTuple_New(m);
            PyObject *axes = part ? PyLong_FromSsize_t(PyTuple_GET_SIZE(PyTuple_GET_ITEM(item, m - 2))) : NULL;
            if (!axes) {
                Py_XDECREF(part);
                Py_DECREF(axes_key);
                return NULL;
            }
            for (Py_ssize_t j = 0; j < m; ++j) {
                PyObject *v = j == m - 2 ? axes : PyTuple_GET_ITEM(item, j);
                if (j != m - 2) Py_INCREF(v);
                PyTuple_SET_ITEM(part, j, v);
            }
            item = part;
        } else {
            Py_INCREF(item);
        }
        PyTuple_SET_ITEM(axes_key, i, item);
    }
    return axes_key;
}

/* Keeps the record the call offered, where the call was its one library call: the function
 * returned the output the record writes (given: the caller's output array, which it must be;
 * NULL where the call made its own). A record with a view is kept under axes_key too (by_axes;
 * NULL: made here). */
static void keep_record(const Entry *e, PyObject *key, PyObject *axes_key, PyObject *p, PyObject *result,
                        PyObject *given)
{
    PyObject *rec = PyList_GET_ITEM(p, 0);
    if (rec == Py_None || PyList_GET_ITEM(p, 1) != Py_False || !PyObject_TypeCheck(rec, &RecordType)) return;
    Record *r = (Record *)rec;
    if (given && (r->first_output != given || r->second_shape != Py_None)) return;
    /* the function returned the output the record makes (both, as a tuple, where it makes two) */
    const int two = r->second_shape != Py_None;
    if (two ? !PyTuple_CheckExact(result) || PyTuple_GET_SIZE(result) != 2 ||
                  PyTuple_GET_ITEM(result, 0) != r->first_output || PyTuple_GET_ITEM(result, 1) != r->first_second
            : result != r->first_output)
        return;
    r->into_given = given != NULL;
    Py_CLEAR(r->first_output);
    Py_CLEAR(r->first_second);
    if (PyObject_SetItem(RECORDS, key, rec) < 0) {
        PyErr_Clear();
        return;
    }
    ++recorded;
    if (r->view_n) {
        PyObject *second = axes_key ? (Py_INCREF(axes_key), axes_key) : by_axes(e, key, given != NULL);
        if (!second || PyObject_SetItem(RECORDS, second, rec) < 0) PyErr_Clear();
        Py_XDECREF(second);
    }
    while (PyObject_Length(RECORDS) > 2 * KEPT) {
        PyObject *dropped = PyObject_CallMethod(RECORDS, "popitem", "O", Py_False);
        if (!dropped) {
            PyErr_Clear();
            break;
        }
        Py_DECREF(dropped);
    }
}

/* ---- the entry's calls ----------------------------------------------------------------------------- */


static PyObject *REQUIRED;

static PyObject *run_python(Entry *e, PyObject *key, PyObject *axes_key, PyObject *const *args, size_t nargsf,
                            PyObject *kwnames, PyObject *given)
{
    ++misses;
    PyObject *outer = pending_get();
    if (!outer && PyErr_Occurred()) return NULL;
    Py_XINCREF(outer);
    if (outer) spoil(outer);
    PyObject *p = key ? Py_BuildValue("[OO]", Py_None, Py_False) : NULL;
    if (key && (!p || pending_set(p) < 0)) {
        Py_XDECREF(p);
        Py_XDECREF(outer);
        return NULL;
    }
    if (!key) pending_set(NULL); /* a call no record can serve: nested offers go nowhere */
    PyObject *result = PyObject_Vectorcall(e->slow, args, nargsf, kwnames);
    pending_set(outer);
    Py_XDECREF(outer);
    if (result && key) keep_record(e, key, axes_key, p, result, given);
    Py_XDECREF(p);
    return result;
}

static PyObject *entry_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Entry *e = (Entry *)self;
    const Py_ssize_t n = PyTuple_GET_SIZE(e->names), nargs = PyVectorcall_NARGS(nargsf);
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    PyObject *values[32];
    if (n > 32 || nargs > e->positional) return run_python(e, NULL, NULL, args, nargsf, kwnames, NULL);
    for (Py_ssize_t i = 0; i < n; ++i) values[i] = i < nargs ? args[i] : PyTuple_GET_ITEM(e->defaults, i);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, k);
        Py_ssize_t j = 0;
        while (j < n && PyTuple_GET_ITEM(e->names, j) != name &&
               PyUnicode_Compare(PyTuple_GET_ITEM(e->names, j), name) != 0)
            ++j;
        if (j == n || j < nargs) return run_python(e, NULL, NULL, args, nargsf, kwnames, NULL); /* Python says what */
        values[j] = args[nargs + k];
    }
    for (Py_ssize_t i = 0; i < n; ++i)
        if (values[i] == REQUIRED) return run_python(e, NULL, NULL, args, nargsf, kwnames, NULL);
    void *in_ptr = NULL, *w_ptr = NULL, *given_ptr = NULL;
    PyObject *given = NULL;                  /* the caller's output array, keyed as an array */
    PyObject *shapes[2] = {NULL, NULL};      /* the input's shape and the caller's output's */
    PyObject *key = RECORDS ? call_key(e, values, n, &in_ptr, &w_ptr, &given_ptr, &given, shapes) : NULL;
    if (!key) {
        if (PyErr_Occurred()) return NULL;
        return run_python(e, NULL, NULL, args, nargsf, kwnames, NULL);
    }
    PyObject *rec = PyDict_GetItemWithError(RECORDS, key), *axes_key = NULL;
    if (!rec && !PyErr_Occurred()) { /* a view's record made on an input of another shape */
        axes_key = by_axes(e, key, given != NULL);
        rec = axes_key ? PyDict_GetItemWithError(RECORDS, axes_key) : NULL;
    }
    const int served = rec ? serves((Record *)rec, shapes[0], given ? shapes[1] : NULL) : 0;
    if (served <= 0) {
        PyObject *result = PyErr_Occurred() ? NULL : run_python(e, key, axes_key, args, nargsf, kwnames, given);
        Py_DECREF(key);
        Py_XDECREF(axes_key);
        Py_XDECREF(shapes[0]);
        Py_XDECREF(shapes[1]);
        return result;
    }
    Py_INCREF(rec);
    Py_DECREF(key);
    Py_XDECREF(axes_key);
    PyObject *y = NULL;
    if (((Record *)rec)->into_given && !given_output_apart((Record *)rec, given, values[0], &in_ptr, &given_ptr)) {
        /* read-only, or overlapping the input: the Python path says what, or copies */
        y = run_python(e, NULL, NULL, args, nargsf, kwnames, NULL);
    } else {
        PyObject *outer = pending_get();
        if (outer) spoil(outer);
        ++hits;
        y = replay((Record *)rec, values[0], shapes[0], in_ptr, e->weights >= 0 ? values[e->weights] : NULL, w_ptr,
                   ((Record *)rec)->into_given ? given : NULL, given_ptr);
    }
    Py_DECREF(rec);
    Py_XDECREF(shapes[0]);
    Py_XDECREF(shapes[1]);
    return y;
}

static PyObject *entry_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *slow, *names, *defaults;
    Py_ssize_t positional, weights, content = -1, output = -1;
    if (!PyArg_ParseTuple(args, "OO!O!nn|nn:Entry", &slow, &PyTuple_Type, &names, &PyTuple_Type, &defaults,
                          &positional, &weights, &content, &output))
        return NULL;
    (void)kwargs;
    const Py_ssize_t n = PyTuple_GET_SIZE(names);
    if (PyTuple_GET_SIZE(defaults) != n || n == 0 || n > 32 || positional < 1 || positional > n || weights < -1 ||
        weights >= n || content < -1 || content >= n || (content >= 0 && (content == 0 || content == weights)) ||
        output < -1 || output >= n || (output >= 0 && (output == 0 || output == weights || output == content)) ||
        !PyCallable_Check(slow)) {
        PyErr_SetString(PyExc_ValueError, "Entry: a function, 1 to 32 names with a default each, how many of them "
                                          "are positional (at least the first), the weights' position or -1 and "
                                          "the content parameter's (another, not the first) or -1, and the "
                                          "output's (another again) or -1");
        return NULL;
    }
    Entry *e = (Entry *)type->tp_alloc(type, 0);
    if (!e) return NULL;
    e->vectorcall = entry_vectorcall;
    Py_INCREF(slow), e->slow = slow;
    Py_INCREF(names), e->names = names;
    Py_INCREF(defaults), e->defaults = defaults;
    e->positional = positional, e->weights = weights, e->content = content, e->output = output;
    return (PyObject *)e;
}

static void entry_dealloc(Entry *e)
{
    Py_XDECREF(e->slow);
    Py_XDECREF(e->names);
    Py_XDECREF(e->defaults);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* The function's own attributes (__doc__, __name__, __wrapped__'s chain, __signature__ ...):
 * the entry answers as the function it stands for. */
static PyObject *entry_getattro(PyObject *self, PyObject *name)
{
    Entry *e = (Entry *)self;
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(e->slow);
        return e->slow;
    }
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__reduce__") != 0 &&
        PyUnicode_CompareWithASCIIString(name, "__reduce_ex__") != 0 &&
        PyUnicode_CompareWithASCIIString(name, "__class__") != 0)
        return PyObject_GetAttr(e->slow, name);
    return PyObject_GenericGetAttr(self, name);
}

static PyObject *entry_repr(Entry *e) { return PyObject_Repr(e->slow); }

/* Pickled by reference, as a function is: its module and name. */
static PyObject *entry_reduce(Entry *e, PyObject *unused)
{
    (void)unused;
    return PyObject_GetAttrString(e->slow, "__qualname__");
}

static PyObject *entry_reduce_ex(Entry *e, PyObject *protocol)
{
    (void)protocol;
    return entry_reduce(e, NULL);
}

static PyMethodDef entry_methods[] = {
    {"__reduce__", (PyCFunction)entry_reduce, METH_NOARGS, NULL},
    {"__reduce_ex__", (PyCFunction)entry_reduce_ex, METH_O, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject EntryType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "memhier._entry.Entry",
    .tp_basicsize = sizeof(Entry),
    .tp_dealloc = (destructor)entry_dealloc,
    .tp_vectorcall_offset = offsetof(Entry, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = entry_getattro,
    .tp_repr = (reprfunc)entry_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A memhier.ndimage function with its compiled entry (memhier._fast).",
    .tp_methods = entry_methods,
    .tp_new = entry_new,
};

/* ---- the module ------------------------------------------------------------------------------- */

static PyObject *configure(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *kinds, *kind_of, *records, *context_type, *dtype_type, *in_place, *empty, *check;
    Py_ssize_t kept;
    if (!PyArg_ParseTuple(args, "O!OOO!O!OOOn:configure", &PyDict_Type, &kinds, &kind_of, &records, &PyType_Type,
                          &context_type, &PyType_Type, &dtype_type, &in_place, &empty, &check, &kept))
        return NULL;
    if (!PyDict_Check(records) || kept < 1) {
        PyErr_SetString(PyExc_ValueError, "configure: records is a dict, kept >= 1");
        return NULL;
    }
    PyObject **slots[] = {&KINDS,      &KIND_OF,          &RECORDS,         &CONTEXT_TYPE,
                          &DTYPE_TYPE, &CONTEXT_IN_PLACE, &EMPTY_LIKE_KIND, &CHECK};
    PyObject *given[] = {kinds, kind_of, records, context_type, dtype_type, in_place, empty, check};
    for (int i = 0; i < 8; ++i) {
        Py_INCREF(given[i]);
        Py_XSETREF(*slots[i], given[i]);
    }
    KEPT = kept;
    Py_RETURN_NONE;
}

static PyObject *stats(PyObject *self, PyObject *unused)
{
    (void)self, (void)unused;
    return Py_BuildValue("{sKsKsK}", "hits", hits, "misses", misses, "recorded", recorded);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS, "configure(kinds, kind_of, records, Context, numpy.dtype, "
                                           "context_in_place, empty_like_kind, check, kept): what the entry reads "
                                           "of the package"},
    {"pending", entry_pending, METH_NOARGS, "The record list of the entry call in progress on this thread, or None."},
    {"stats", stats, METH_NOARGS, "Calls replayed (hits), run in Python (misses), records kept."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_entry", NULL, -1, methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__entry(void)
{
    if (PyType_Ready(&RecordType) < 0 || PyType_Ready(&EntryType) < 0) return NULL;
    S_NUMPY = PyUnicode_InternFromString("numpy");
    S_CUPY = PyUnicode_InternFromString("cupy");
    S_PENDING = PyUnicode_InternFromString("memhier._entry.pending");
    for (int i = 0; i < ATTR_NAMES; ++i)
        if (!(ATTR[i] = PyUnicode_InternFromString(attr_names[i]))) return NULL;
    REQUIRED = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    PyObject *m = PyModule_Create(&module);
    if (!m || !S_NUMPY || !S_CUPY || !S_PENDING || !REQUIRED) return NULL;
    Py_INCREF(&RecordType);
    Py_INCREF(&EntryType);
    Py_INCREF(REQUIRED);
    if (PyModule_AddObject(m, "Record", (PyObject *)&RecordType) < 0 ||
        PyModule_AddObject(m, "Entry", (PyObject *)&EntryType) < 0 || PyModule_AddObject(m, "REQUIRED", REQUIRED) < 0)
        return NULL;
    PyModule_AddIntConstant(m, "CONV2D_MODE", CONV2D_MODE);
    PyModule_AddIntConstant(m, "CONV2D_MODE_BATCHED", CONV2D_MODE_BATCHED);
    PyModule_AddIntConstant(m, "CONV2D_MODE_REVERSED", CONV2D_MODE_REVERSED);
    PyModule_AddIntConstant(m, "CONV2D_PLANNED_MODE", CONV2D_PLANNED_MODE);
    PyModule_AddIntConstant(m, "SEPFILTER", SEPFILTER);
    PyModule_AddIntConstant(m, "SEPFILTER_SUM", SEPFILTER_SUM);
    PyModule_AddIntConstant(m, "CONV2D", CONV2D);
    PyModule_AddIntConstant(m, "CONV1D", CONV1D);
    PyModule_AddIntConstant(m, "CONV1D_BATCHED", CONV1D_BATCHED);
    PyModule_AddIntConstant(m, "CONV1D_MODE", CONV1D_MODE);
    PyModule_AddIntConstant(m, "REDUCE_SUM", REDUCE_SUM);
    PyModule_AddIntConstant(m, "BINCOUNT", BINCOUNT);
    PyModule_AddIntConstant(m, "HISTOGRAM_RANGE", HISTOGRAM_RANGE);
    PyModule_AddIntConstant(m, "RANK", RANK);
    return m;
}
