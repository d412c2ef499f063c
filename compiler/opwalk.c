/* kiln_opwalk: the walk behind kiln's passes' `collect_ops`, in C.
 *
 * In: the address of an operation (MlirOperation), a tuple of op names, the
 * walk order, and (once, `init`) the addresses of the MLIR C API functions
 * it calls, which Python takes from the provider's C API library by ctypes:
 * this file links against nothing but Python.
 * Out: a list of capsules ("<bindings>.ir.Operation._CAPIPtr") of the
 * operations named, nested ones included, in pre-order or post-order; the
 * caller wraps them as `ir.Operation`s.
 *
 * Why: the bindings' `Operation.walk` calls back into Python for every
 * operation and makes a Python object of each; kiln's passes walk the
 * module ~120 times per compile to find a few kinds of ops, ~25 % of the
 * Python passes' time. Here names compare as uniqued identifiers (one
 * pointer compare per op and name) and Python sees only the matches.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

typedef struct { void *ptr; } Handle;
typedef struct { const char *data; size_t length; } StringRef;

static Handle (*get_context)(Handle op);
static Handle (*identifier_get)(Handle ctx, StringRef name);
static Handle (*get_name)(Handle op);
static intptr_t (*num_regions)(Handle op);
static Handle (*get_region)(Handle op, intptr_t pos);
static Handle (*first_block)(Handle region);
static Handle (*next_block)(Handle block);
static Handle (*first_operation)(Handle block);
static Handle (*next_operation)(Handle op);
static const char *capsule_name;
static PyObject *capsule_name_object; /* keeps capsule_name alive */

#define MAX_NAMES 64

typedef struct {
  const void *names[MAX_NAMES];
  int count;
  int post_order;
  PyObject *found;
} Walk;

static int matches(const Walk *w, Handle op) {
  const void *name = get_name(op).ptr;
  for (int i = 0; i < w->count; i++)
    if (w->names[i] == name)
      return 1;
  return 0;
}

static int add(Walk *w, Handle op) {
  PyObject *capsule = PyCapsule_New(op.ptr, capsule_name, NULL);
  if (capsule == NULL)
    return -1;
  int failed = PyList_Append(w->found, capsule);
  Py_DECREF(capsule);
  return failed;
}

static int visit(Walk *w, Handle op, int depth) {
  if (depth > 10000) {
    PyErr_SetString(PyExc_RecursionError, "kiln_opwalk: operations nested over 10000 deep");
    return -1;
  }
  if (!w->post_order && matches(w, op) && add(w, op) < 0)
    return -1;
  intptr_t regions = num_regions(op);
  for (intptr_t r = 0; r < regions; r++)
    for (Handle block = first_block(get_region(op, r)); block.ptr; block = next_block(block))
      for (Handle inner = first_operation(block); inner.ptr; inner = next_operation(inner))
        if (visit(w, inner, depth + 1) < 0)
          return -1;
  if (w->post_order && matches(w, op) && add(w, op) < 0)
    return -1;
  return 0;
}

static PyObject *collect(PyObject *self, PyObject *args) {
  unsigned long long address;
  PyObject *names;
  int post_order;
  (void)self;
  if (!PyArg_ParseTuple(args, "KO!p", &address, &PyTuple_Type, &names, &post_order))
    return NULL;
  if (get_name == NULL) {
    PyErr_SetString(PyExc_RuntimeError, "kiln_opwalk: init() was not called");
    return NULL;
  }
  Walk w;
  w.post_order = post_order;
  w.count = 0;
  Handle op = {(void *)(uintptr_t)address};
  Handle ctx = get_context(op);
  Py_ssize_t n = PyTuple_GET_SIZE(names);
  if (n > MAX_NAMES) {
    PyErr_SetString(PyExc_ValueError, "kiln_opwalk: at most 64 op names");
    return NULL;
  }
  for (Py_ssize_t i = 0; i < n; i++) {
    Py_ssize_t length;
    const char *text = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(names, i), &length);
    if (text == NULL)
      return NULL;
    StringRef ref = {text, (size_t)length};
    w.names[w.count++] = identifier_get(ctx, ref).ptr;
  }
  w.found = PyList_New(0);
  if (w.found == NULL)
    return NULL;
  if (visit(&w, op, 0) < 0) {
    Py_DECREF(w.found);
    return NULL;
  }
  return w.found;
}

static PyObject *init(PyObject *self, PyObject *args) {
  unsigned long long f[9];
  PyObject *name;
  (void)self;
  if (!PyArg_ParseTuple(args, "(KKKKKKKKK)U", &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8],
                        &name))
    return NULL;
  for (int i = 0; i < 9; i++)
    if (f[i] == 0) {
      PyErr_SetString(PyExc_ValueError, "kiln_opwalk: a C API function's address is 0");
      return NULL;
    }
  const char *text = PyUnicode_AsUTF8(name);
  if (text == NULL)
    return NULL;
  Py_XDECREF(capsule_name_object);
  Py_INCREF(name);
  capsule_name_object = name;
  capsule_name = text;
  get_context = (Handle(*)(Handle))(uintptr_t)f[0];
  identifier_get = (Handle(*)(Handle, StringRef))(uintptr_t)f[1];
  get_name = (Handle(*)(Handle))(uintptr_t)f[2];
  num_regions = (intptr_t(*)(Handle))(uintptr_t)f[3];
  get_region = (Handle(*)(Handle, intptr_t))(uintptr_t)f[4];
  first_block = (Handle(*)(Handle))(uintptr_t)f[5];
  next_block = (Handle(*)(Handle))(uintptr_t)f[6];
  first_operation = (Handle(*)(Handle))(uintptr_t)f[7];
  next_operation = (Handle(*)(Handle))(uintptr_t)f[8];
  Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", init, METH_VARARGS, "init((addresses of the 9 C API functions), capsule name)"},
    {"collect", collect, METH_VARARGS, "collect(operation address, names tuple, post_order) -> [capsule]"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kiln_opwalk", NULL, -1, methods};

PyMODINIT_FUNC PyInit_kiln_opwalk(void) { return PyModule_Create(&module); }
