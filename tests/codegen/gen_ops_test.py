#!/usr/bin/env python3
"""Tests the op table's generator (tools/codegen/gen_ops.py): the project's table generates the
declarations, methods, bodies and Python bindings its rows ask for; a file is rewritten only when
its text changes; a malformed row is refused with a message naming the row and the fault, and
nothing is written. Run by CTest (codegen.gen_ops); exits 1 on the first failure."""

import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN = os.path.join(ROOT, "tools", "codegen", "gen_ops.py")


def run(table, out):
    return subprocess.run([sys.executable, GEN, "--table", table, "--include-dir",
                           os.path.join(out, "include"), "--source-dir", os.path.join(out, "src")],
                          capture_output=True, text=True)


def read(out, *path):
    with open(os.path.join(out, *path), encoding="utf-8") as f:
        return f.read()


def check(cond, what):
    if not cond:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def test_the_project_table(tmp):
    r = run(os.path.join(ROOT, "ops", "op_table.py"), tmp)
    check(r.returncode == 0, f"the project's table generates: {r.stderr}")
    h = read(tmp, "include", "oneflow_lite", "generated", "functions.h")
    check("Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);" in h,
          "narrow's declaration")
    check("Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);"
          in h, "sum's defaults")
    inc = read(tmp, "include", "oneflow_lite", "generated", "tensor_methods.inc")
    check("Tensor narrow(int64_t dim, int64_t start, int64_t length) const;" in inc, "narrow's method")
    check("expand_backward" not in inc, "no method for a row without method=True")
    cpp = read(tmp, "src", "functions.cpp")
    check('ops::BuiltinOp("narrow");\n  return functional::Call(op, x, Attrs(op.attrs, dim, start, length));'
          in cpp, "narrow's body passes its attributes in order")
    check('functional::Call(op, {a, b}, {})[0]' in cpp, "add's body passes both tensors")
    check("Tensor view(" not in cpp, "view's body is hand-written")
    check("Tensor Tensor::view(const std::vector<int64_t>& shape) const" in cpp, "view's method")
    py = read(tmp, "src", "python_ops.cpp")
    check('ParseArgs("narrow", args, nargsf, kwnames, {"dim", "start", "length"}, 3, a);' in py,
          "narrow's Python arguments, all required")
    check('ParseArgs("sum", args, nargsf, kwnames, {"input", "dim", "keepdim"}, 1, a);' in py,
          "ofl.sum's keyword names (dims is Python's dim)")
    check('FastInts(args + 0, nargs - 0, "expand", "sizes")' in py, "expand's *sizes")
    check("Function_add" not in py, "no Python binding for a row without python")
    check('nb::make_tuple("expand", "repeat", "reshape", "permute", "narrow", "flatten", "squeeze",' in py,
          "the module functions are listed, in table order")
    # The types issue 37's rows brought: double, str (with a quoted default) and DType.
    check('Tensor gelu(const Tensor& x, const std::string& approximate = "none");' in h,
          "gelu's str default")
    check("Tensor pow(const Tensor& x, double exponent);" in h, "pow's double exponent")
    check("Tensor to(DType dtype) const;" in inc, "to(dtype)'s method")
    check('const std::string approximate = a[1] ? ArgString(a[1], "gelu", "approximate") : '
          'std::string("none");' in py, "gelu's Python argument and its default")
    # Scalar attributes and Python bindings of several tensors (a number for the later ones).
    check("Tensor clamp(const Tensor& x, Scalar min, Scalar max);" in h, "clamp's Scalar bounds")
    check('const Scalar min = ArgScalar(a[0], "clamp_min", "min");' in py, "Tensor.clamp_min's bound")
    check('ParseArgs("where", args, nargsf, kwnames, {"condition", "input", "other"}, 3, a);' in py,
          "ofl.where's three tensors by PyTorch's names")
    check('const Tensor other = ArgTensorOrNumber(a[2], "where", "other", t);' in py,
          "a later tensor argument takes a number")
    check("ReleaseIfGlobal r(t, input, other);" in py, "every tensor of the call decides the release")
    # int? (an int or None).
    check("Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);"
          in h, "argmax's optional dim")
    check('a[0] && !a[0].is_none() ? std::optional<int64_t>(ArgInt(a[0], "argmax", "dim")) : std::nullopt'
          in py, "Tensor.argmax's dim: None or missing is nullopt")
    # Unchanged text: the files are not rewritten (their mtimes stay).
    path = os.path.join(tmp, "src", "functions.cpp")
    os.utime(path, (1, 1))
    check(run(os.path.join(ROOT, "ops", "op_table.py"), tmp).returncode == 0, "a second run")
    check(os.stat(path).st_mtime == 1, "an unchanged file is not rewritten")


def test_a_double_argument_from_python(tmp):
    # No row of the project's table reads a double from Python (pow's Python binding is
    # hand-written, for its tensor exponent), so a table of its own checks the reading.
    table = os.path.join(tmp, "double.py")
    with open(table, "w", encoding="utf-8") as f:
        f.write('ROWS = [dict(sig="scale(Tensor x, double factor)", method=True, python="both")]\n')
    out = os.path.join(tmp, "double")
    check(run(table, out).returncode == 0, "a table with a double argument generates")
    py = read(out, "src", "python_ops.cpp")
    check('const double factor = ArgDouble(a[0], "scale", "factor");' in py,
          "Tensor.scale's Python double")


BAD_ROWS = [
    ('dict(sig="bad name(Tensor x)")', "row 0", "is not name(Type arg, ...)"),
    ('dict(sig="f(Tensor x, float y)")', "row 0 (f)", "argument 'float y'"),
    ('dict(sig="f(int y, Tensor x)")', "row 0 (f)", "the Tensor arguments come first"),
    ('dict(sig="f(int y)")', "row 0 (f)", "at least one Tensor"),
    ('dict(sig="f(Tensor x, int a=1, int b)")', "row 0 (f)", "without a default follows one with"),
    ('dict(sig="f(Tensor x, bool a=1)")', "row 0 (f)", "default its type cannot take"),
    ('dict(sig="f(Tensor x, double a=x)")', "row 0 (f)", "default its type cannot take"),
    ('dict(sig="f(Tensor x, str a=none)")', "row 0 (f)", "default its type cannot take"),
    ('dict(sig="f(Tensor x, DType a=1)")', "row 0 (f)", "default its type cannot take"),
    ('dict(sig="f(Tensor x, int x)")', "row 0 (f)", "an argument name appears twice"),
    ('dict(sig="f(Tensor x, int? a=1)")', "row 0 (f)", "default its type cannot take"),
    ('dict(sig="f(Tensor x)", pyton="method")', "row 0", "unknown keys ['pyton']"),
    ('dict(sig="f(Tensor x)", python="method")', "row 0 (f)", "needs the C++ method"),
    ('dict(sig="f(Tensor x, Scalar a=1)")', "row 0 (f)", "default its type cannot take"),
    ('dict(sig="f(Tensor x)", py_names={"y": "z"})', "row 0 (f)", "names 'y', which is no argument"),
    ('dict(sig="f(Tensor x)"), dict(sig="f(Tensor y)")', "bad15.py", "functions named twice: ['f']"),
]


def test_bad_rows(tmp):
    for i, (rows, where, fault) in enumerate(BAD_ROWS):
        table = os.path.join(tmp, f"bad{i}.py")
        with open(table, "w", encoding="utf-8") as f:
            f.write(f"ROWS = [{rows}]\n")
        out = os.path.join(tmp, f"out{i}")
        r = run(table, out)
        check(r.returncode == 1, f"{rows}: refused (rc {r.returncode})")
        check(f"bad{i}.py" in r.stderr and where in r.stderr and fault in r.stderr, f"{rows}: the message names {where!r} and "
              f"{fault!r}: {r.stderr}")
        check(not os.path.exists(out), f"{rows}: nothing written")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        test_the_project_table(os.path.join(tmp, "ok"))
        test_a_double_argument_from_python(tmp)
        test_bad_rows(tmp)
    print("gen_ops: the table generates, and every malformed row is refused naming the row")
