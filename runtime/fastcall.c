/* kiln runtime: the call hot path in C (optional; runtime/executable.py
 * falls back to Python when this cannot be built).
 *
 * In: a Caller built once per executable (entry points, argument and
 * result specs) and, per call, the argument values (NumPy arrays of the
 * declared dtype and rank in any layout, scalars for rank-0 arguments).
 * Out: the list of results as NumPy arrays owning their malloc'd buffers
 * (base: a kiln_fastcall.OwnedBuffer) or NumPy scalars for rank 0,
 * or (kind code, value0, value1, message address) when a run-time check failed.
 * Same rules as the Python path: canonical row-major strides, results
 * aliasing an argument or a library constant are copied, results sharing a
 * buffer share one owner.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_2_0_API_VERSION
#define NPY_TARGET_VERSION NPY_2_0_API_VERSION
#include <numpy/arrayobject.h>
#include <stddef.h>
#include <stdint.h>
#include <structmember.h>
#include <stdlib.h>

#define MAX_RANK 32
#define GLOBAL_ALLOCATED ((int64_t)0xDEADBEEF)

typedef int64_t (*invoke_fn)(void *packed, void **args, int64_t *failure);

/* Owns one buffer malloc'd by compiled code; frees it when it dies. Made and
 * destroyed without running Python code, so a pending KeyboardInterrupt can
 * never land half-way through either (a Python __init__ or __del__ would take
 * it, leak the buffer and print "Exception ignored"). */
typedef struct {
  PyObject_HEAD
  int64_t allocated;
} OwnedBuffer;

static Py_ssize_t live_buffers; /* guarded by the GIL */

static void owned_buffer_dealloc(OwnedBuffer *self) {
  if (self->allocated) {
    free((void *)(uintptr_t)self->allocated);
    live_buffers--;
  }
  Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyMemberDef owned_buffer_members[] = {
    {"allocated", T_LONGLONG, offsetof(OwnedBuffer, allocated), READONLY, "address of the owned buffer"},
    {NULL},
};

static PyTypeObject OwnedBufferType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln_fastcall.OwnedBuffer",
    .tp_basicsize = sizeof(OwnedBuffer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = (destructor)owned_buffer_dealloc,
    .tp_members = owned_buffer_members,
    .tp_doc = "Owns one buffer of compiled code; frees it when the last array viewing it dies.",
};

static PyObject *owned_buffer_new(int64_t allocated) {
  OwnedBuffer *owner = PyObject_New(OwnedBuffer, &OwnedBufferType);
  if (!owner) return NULL;
  owner->allocated = allocated;
  live_buffers++;
  return (PyObject *)owner;
}

static PyObject *count_live_buffers(PyObject *module, PyObject *unused) { return PyLong_FromSsize_t(live_buffers); }

typedef struct {
  PyObject_HEAD
  invoke_fn invoke;
  void *packed;
  Py_ssize_t nargs, nresults;
  int *arg_ranks, *arg_types, *result_ranks;
  char *written; /* written[i]: the library writes argument i in place */
  PyArray_Descr **arg_descrs, **result_descrs;
  Py_ssize_t words; /* descriptor words of all results then all arguments */
} Caller;

static void caller_dealloc(Caller *self) {
  for (Py_ssize_t i = 0; i < self->nargs; ++i) Py_XDECREF(self->arg_descrs[i]);
  for (Py_ssize_t i = 0; i < self->nresults; ++i) Py_XDECREF(self->result_descrs[i]);
  PyMem_Free(self->arg_ranks);
  PyMem_Free(self->arg_types);
  PyMem_Free(self->result_ranks);
  PyMem_Free(self->written);
  PyMem_Free(self->arg_descrs);
  PyMem_Free(self->result_descrs);
  Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Caller(invoke_address, packed_address, [(dtype, rank)...] args, [(dtype, rank)...] results,
 *        [index...] written arguments) */
static int caller_init(Caller *self, PyObject *args, PyObject *kwds) {
  unsigned long long invoke, packed;
  PyObject *arg_specs, *result_specs, *written = NULL;
  if (!PyArg_ParseTuple(args, "KKO!O!|O!", &invoke, &packed, &PyList_Type, &arg_specs, &PyList_Type, &result_specs,
                        &PyList_Type, &written))
    return -1;
  self->invoke = (invoke_fn)(uintptr_t)invoke;
  self->packed = (void *)(uintptr_t)packed;
  self->nargs = PyList_GET_SIZE(arg_specs);
  self->nresults = PyList_GET_SIZE(result_specs);
  self->arg_ranks = PyMem_Calloc(self->nargs + 1, sizeof(int));
  self->arg_types = PyMem_Calloc(self->nargs + 1, sizeof(int));
  self->result_ranks = PyMem_Calloc(self->nresults + 1, sizeof(int));
  self->arg_descrs = PyMem_Calloc(self->nargs + 1, sizeof(PyArray_Descr *));
  self->result_descrs = PyMem_Calloc(self->nresults + 1, sizeof(PyArray_Descr *));
  self->written = PyMem_Calloc(self->nargs + 1, 1);
  if (!self->arg_ranks || !self->arg_types || !self->result_ranks || !self->arg_descrs || !self->result_descrs ||
      !self->written) {
    PyErr_NoMemory();
    return -1;
  }
  self->words = 0;
  for (Py_ssize_t i = 0; i < self->nresults; ++i) {
    PyObject *dtype;
    int rank;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(result_specs, i), "Oi", &dtype, &rank)) return -1;
    if (rank > MAX_RANK || !PyArray_DescrConverter(dtype, &self->result_descrs[i])) {
      PyErr_SetString(PyExc_ValueError, "bad result spec");
      return -1;
    }
    self->result_ranks[i] = rank;
    self->words += 3 + 2 * rank;
  }
  for (Py_ssize_t i = 0; i < self->nargs; ++i) {
    PyObject *dtype;
    int rank;
    if (!PyArg_ParseTuple(PyList_GET_ITEM(arg_specs, i), "Oi", &dtype, &rank)) return -1;
    if (rank > MAX_RANK || !PyArray_DescrConverter(dtype, &self->arg_descrs[i])) {
      PyErr_SetString(PyExc_ValueError, "bad argument spec");
      return -1;
    }
    self->arg_ranks[i] = rank;
    self->arg_types[i] = self->arg_descrs[i]->type_num;
    self->words += 3 + 2 * rank;
  }
  for (Py_ssize_t j = 0; written && j < PyList_GET_SIZE(written); ++j) {
    Py_ssize_t i = PyLong_AsSsize_t(PyList_GET_ITEM(written, j));
    if (i < 0 || i >= self->nargs) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bad written argument index");
      return -1;
    }
    self->written[i] = 1;
  }
  return 0;
}

static int seen_before(int64_t p, const int64_t *ptrs, Py_ssize_t n) {
  for (Py_ssize_t i = 0; i < n; ++i)
    if (ptrs[i] == p) return 1;
  return 0;
}

/* A result array over `data`; owner NULL means borrowed memory: copy it. */
static PyObject *result_value(Caller *self, Py_ssize_t i, void *data, const int64_t *sizes, PyObject *owner) {
  int rank = self->result_ranks[i];
  PyArray_Descr *descr = self->result_descrs[i];
  npy_intp dims[MAX_RANK];
  int empty = 0;
  for (int k = 0; k < rank; ++k) {
    dims[k] = (npy_intp)sizes[k];
    empty |= dims[k] == 0;
  }
  if (empty) {
    Py_INCREF(descr);
    return PyArray_Empty(rank, dims, descr, 0);
  }
  if (rank == 0) return PyArray_Scalar(data, descr, NULL);
  Py_INCREF(descr);
  PyObject *view = PyArray_NewFromDescr(&PyArray_Type, descr, rank, dims, NULL, data, NPY_ARRAY_CARRAY, NULL);
  if (!view) return NULL;
  if (!owner) {
    PyObject *copy = PyArray_NewCopy((PyArrayObject *)view, NPY_CORDER);
    Py_DECREF(view);
    return copy;
  }
  Py_INCREF(owner);
  if (PyArray_SetBaseObject((PyArrayObject *)view, owner) < 0) {
    Py_DECREF(view);
    return NULL;
  }
  return view;
}

static PyObject *caller_call(Caller *self, PyObject *args, PyObject *kwds) {
  PyObject *values;
  if (!PyArg_ParseTuple(args, "O", &values)) return NULL;
  PyObject *seq = PySequence_Fast(values, "kiln: arguments must be a sequence");
  if (!seq) return NULL;
  if (PySequence_Fast_GET_SIZE(seq) != self->nargs) {
    Py_DECREF(seq);
    PyErr_Format(PyExc_TypeError, "kiln: the compiled function takes %zd values, got %zd", self->nargs,
                 PySequence_Fast_GET_SIZE(seq));
    return NULL;
  }
  PyObject **items = PySequence_Fast_ITEMS(seq);
  Py_ssize_t n = self->nargs, nres = self->nresults;
  /* One zeroed block of 8-byte cells for everything this call needs. */
  Py_ssize_t cells = self->words + 2 * n + 2 * (n + 2) + 2 * (n + 1) + 3 * (nres + 1);
  int64_t *block = PyMem_Calloc(cells, sizeof(int64_t));
  if (!block) {
    Py_DECREF(seq);
    return PyErr_NoMemory();
  }
  int64_t *words = block;
  int64_t *scratch = words + self->words; /* 2 cells per scalar argument */
  void **slots = (void **)(scratch + 2 * n);
  void **packed = slots + n + 2;
  PyObject **keep = (PyObject **)(packed + n + 2);
  int64_t *inputs = (int64_t *)(keep + n + 1);
  Py_ssize_t *result_offset = (Py_ssize_t *)(inputs + n + 1);
  PyObject **owners = (PyObject **)(result_offset + nres + 1);
  int64_t *owned = (int64_t *)(owners + nres + 1);
  Py_ssize_t nowned = 0;
  PyObject *result = NULL;
  Py_ssize_t offset = 0, nslots = 0;
  for (Py_ssize_t i = 0; i < nres; ++i) {
    result_offset[i] = offset;
    offset += 3 + 2 * self->result_ranks[i];
  }
  if (nres) slots[nslots++] = words;
  for (Py_ssize_t i = 0; i < n; ++i) {
    int64_t *desc = words + offset;
    int rank = self->arg_ranks[i];
    offset += 3 + 2 * rank;
    slots[nslots++] = desc;
    PyObject *value = items[i];
    if (rank == 0) {
      void *cell = scratch + 2 * i;
      if (PyArray_Pack(self->arg_descrs[i], cell, value) < 0) goto done;
      desc[0] = desc[1] = (int64_t)(uintptr_t)cell;
      inputs[i] = desc[0];
      continue;
    }
    if (!PyArray_Check(value) || PyArray_NDIM((PyArrayObject *)value) != rank ||
        PyArray_TYPE((PyArrayObject *)value) != self->arg_types[i]) {
      PyErr_Format(PyExc_TypeError, "kiln: value %zd must be a NumPy array of rank %d and the compiled dtype", i,
                   rank);
      goto done;
    }
    PyArrayObject *arr = (PyArrayObject *)value;
    if (!PyArray_IS_C_CONTIGUOUS(arr) || !PyArray_ISALIGNED(arr)) {
      arr = (PyArrayObject *)PyArray_NewCopy(arr, NPY_CORDER);
      if (!arr) goto done;
      keep[i] = (PyObject *)arr;
    }
    int64_t ptr = (int64_t)(uintptr_t)PyArray_DATA(arr);
    npy_intp *shape = PyArray_DIMS(arr);
    desc[0] = desc[1] = ptr;
    desc[2] = 0;
    int64_t step = 1;
    for (int k = rank - 1; k >= 0; --k) {
      desc[3 + k] = shape[k];
      desc[3 + rank + k] = step;
      step *= shape[k];
    }
    inputs[i] = ptr;
  }
  for (Py_ssize_t i = 0; i < nslots; ++i) packed[i] = &slots[i];
  int64_t failure[4] = {0, 0, 0, 0};
  int64_t code;
  Py_BEGIN_ALLOW_THREADS
  code = self->invoke(self->packed, packed, failure);
  Py_END_ALLOW_THREADS
  if (code) {
    result = Py_BuildValue("(LLLL)", (long long)failure[0], (long long)failure[1], (long long)failure[2],
                           (long long)failure[3]);
    goto done;
  }
  result = PyList_New(nres);
  if (!result) goto done;
  for (Py_ssize_t i = 0; i < nres; ++i) {
    int64_t *desc = words + result_offset[i];
    int64_t allocated = desc[0];
    PyObject *owner = NULL;
    int borrowed = allocated == GLOBAL_ALLOCATED || seen_before(allocated, inputs, n);
    if (!borrowed) {
      for (Py_ssize_t j = 0; j < nowned; ++j)
        if (owned[j] == allocated) owner = owners[j];
      if (!owner) {
        owner = owned_buffer_new(allocated);
        if (!owner) goto fail_results;
        owners[nowned] = owner;
        owned[nowned++] = allocated;
      }
    }
    int64_t itemsize = self->result_descrs[i]->elsize;
    void *data = (char *)(uintptr_t)desc[1] + desc[2] * itemsize;
    PyObject *item = result_value(self, i, data, desc + 3, owner);
    if (!item) goto fail_results;
    PyList_SET_ITEM(result, i, item);
  }
  /* Owners no array references (scalar and empty results) free their buffer now. */
  for (Py_ssize_t j = 0; j < nowned; ++j) Py_DECREF(owners[j]);
  /* A written argument the call saw as a copy (scalar scratch, or a
   * non-contiguous or unaligned array) gets the copy's final contents. */
  for (Py_ssize_t i = 0; result && i < n; ++i) {
    if (!self->written[i] || !PyArray_Check(items[i])) continue;
    int failed;
    if (self->arg_ranks[i] == 0) {
      PyObject *final = PyArray_Scalar(scratch + 2 * i, self->arg_descrs[i], NULL);
      failed = !final || PyArray_SETITEM((PyArrayObject *)items[i], PyArray_DATA((PyArrayObject *)items[i]), final) < 0;
      Py_XDECREF(final);
    } else {
      failed = keep[i] && PyArray_CopyInto((PyArrayObject *)items[i], (PyArrayObject *)keep[i]) < 0;
    }
    if (failed) {
      Py_CLEAR(result);
      break;
    }
  }
  /* Checks of a warning kind that failed (an integer division by zero): warn
   * once each, as NumPy's ufuncs do; a warning filtered into an error fails. */
  for (int k = 1; result && k < 4; ++k)
    if (failure[k] && PyErr_WarnEx(PyExc_RuntimeWarning, (const char *)(uintptr_t)failure[k], 4) < 0) {
      Py_CLEAR(result);
      break;
    }
  goto done;
fail_results:
  for (Py_ssize_t j = 0; j < nowned; ++j) Py_DECREF(owners[j]);
  Py_CLEAR(result);
done:
  for (Py_ssize_t i = 0; i < n; ++i) Py_XDECREF(keep[i]);
  PyMem_Free(block);
  Py_DECREF(seq);
  return result;
}

static PyTypeObject CallerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kiln_fastcall.Caller",
    .tp_basicsize = sizeof(Caller),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)caller_init,
    .tp_dealloc = (destructor)caller_dealloc,
    .tp_call = (ternaryfunc)caller_call,
    .tp_doc = "Calls one compiled kiln function on NumPy values.",
};

static PyMethodDef module_functions[] = {
    {"live_buffers", count_live_buffers, METH_NOARGS, "How many result buffers owned here are alive."},
    {NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kiln_fastcall", "kiln's call hot path.", -1,
                                    module_functions};

PyMODINIT_FUNC PyInit_kiln_fastcall(void) {
  import_array();
  if (PyType_Ready(&CallerType) < 0 || PyType_Ready(&OwnedBufferType) < 0) return NULL;
  PyObject *m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&CallerType);
  Py_INCREF(&OwnedBufferType);
  if (PyModule_AddObject(m, "Caller", (PyObject *)&CallerType) < 0 ||
      PyModule_AddObject(m, "OwnedBuffer", (PyObject *)&OwnedBufferType) < 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
