# The op table: one row per entry point of the public API that calls one op definition. The build
# reads it (tools/codegen/gen_ops.py, from cmake/Codegen.cmake) and generates, in the build tree:
#
#   include/oneflow_lite/generated/functions.h      the declarations of ofl::<name> (functional.h
#                                                    includes them)
#   include/oneflow_lite/generated/tensor_methods.inc   Tensor::<name> for rows with "method"
#   generated/functions.cpp                          their bodies: the op's definition, looked up
#                                                    once, called through the entry of every op call
#                                                    (functional::Call) with its attributes in
#                                                    signature order
#   generated/python_ops.cpp                         the Python bindings of rows with "python", each
#                                                    argument read by one parser (python/src/
#                                                    arg_parser.h)
#
# So a built-in op is its definition (ops/<name>_op.cpp), its kernels and a row here. docs/
# op_pipeline.md, "Entry points", says more.
#
# A row is a dict:
#   sig     "name(Type arg, Type arg=default, ...)": the function's name and arguments. Tensor
#           arguments are the op's inputs, in order; the others its attributes, in order (the op's
#           AttrSchema declares them under the same names). Types: Tensor, int, int[], bool, Shape,
#           int? (an int or None, default None), double, str, DType (no Python reading of its
#           own yet), Scalar (an exact number: a bool,
#           an integer or a double; no default). Defaults: false/true, an
#           integer, {} (an empty list), a decimal number, a quoted lower-case word ("none").
#   op      the definition's name, when it is not the function's.
#   doc     the comment on the declaration (and on the Tensor method).
#   method  True: also a Tensor method, the first Tensor argument being the tensor itself.
#   body    "manual": the function's body is written by hand (functional/), the rest generated.
#   python  "method" (Tensor.<name>), "function" (oneflow_lite.<name>), "both", or absent (none).
#           An int[] argument last after the tensor is taken as *ints or one sequence
#           (x.expand(2, 3), x.expand((2, 3))); any other int[] as a sequence or one int, and None
#           for the default when it has one. Tensor arguments after the first take a tensor or a
#           Python number (ofl::wrapped_number beside the first tensor: t.eq(2),
#           where(c, x, 0.0)). Keyword names are the argument names, or the
#           "py_names" a row maps them to (sum's dims are PyTorch's `dim`); a module function's
#           first tensor is "input" unless py_names names it.

ROWS = [
    dict(
        sig="expand(Tensor x, int[] sizes)",
        method=True,
        python="both",
        doc="x seen with the given sizes: a size -1 keeps the dim, a dim of size 1 is broadcast\n"
        "(stride 0, no copy), new leading dims are added; as torch's Tensor.expand.",
    ),
    dict(
        sig="repeat(Tensor x, int[] repeats)",
        method=True,
        python="both",
        doc="x tiled repeats[i] times along dim i (new leading dims for extra repeats), a copy;\n"
        "as torch's Tensor.repeat.",
    ),
    dict(
        sig="reshape(Tensor x, int[] shape)",
        method=True,
        python="both",
        doc="x with the given shape (one -1 inferred): a view where x's strides allow one, else\n"
        "a copy.",
    ),
    dict(
        sig="view(Tensor x, int[] shape)",
        op="reshape",
        method=True,
        python="method",
        body="manual",
        doc="reshape that never copies: InvalidArgument where x's strides allow no view of the new\n"
        "shape.",
    ),
    dict(
        sig="permute(Tensor x, int[] dims)",
        method=True,
        python="both",
        doc="x with its dims reordered (a view): output dim i is input dim dims[i].",
    ),
    dict(
        sig="narrow(Tensor x, int dim, int start, int length)",
        method=True,
        python="both",
        doc="The view of x's elements start .. start + length - 1 along dim (negative dim and\n"
        "start wrap).",
    ),
    dict(
        sig="flatten(Tensor x, int start_dim=0, int end_dim=-1)",
        op="reshape",
        method=True,
        python="both",
        body="manual",
        doc="x with dims start_dim .. end_dim merged into one (a 0-dim x becomes 1-dim), as\n"
        "torch.flatten: a view where x's strides allow one, else a copy.",
    ),
    dict(
        sig="squeeze(Tensor x, int? dim=None)",
        op="reshape",
        method=True,
        python="both",
        body="manual",
        doc="x without its dims of size 1 (dim: only that one, when its size is 1), a view.",
    ),
    dict(
        sig="unsqueeze(Tensor x, int dim)",
        op="reshape",
        method=True,
        python="both",
        body="manual",
        doc="x with a new dim of size 1 at dim (-(ndim + 1) .. ndim), a view.",
    ),
    dict(
        sig="contiguous(Tensor x)",
        method=True,
        python="method",
        doc="x itself when it is row-major, else a row-major copy.",
    ),
    dict(
        sig="clone(Tensor x)",
        method=True,
        python="method",
        doc="Always a new row-major copy; gradient g.",
    ),
    dict(
        sig="add(Tensor a, Tensor b)",
        doc="Elementwise, with PyTorch's broadcasting: the operands are expanded (stride 0, no copy)\n"
        "to their common shape. Both operands have the same dtype (no promotion; InvalidArgument\n"
        "naming both) and device; bool is refused, and so is div of integer tensors. The forms\n"
        "with a number (functional.h) take it in the tensor's dtype.",
    ),
    dict(sig="sub(Tensor a, Tensor b)", doc="As add."),
    dict(sig="mul(Tensor a, Tensor b)", doc="As add."),
    dict(sig="div(Tensor a, Tensor b)", doc="As add."),
    dict(
        sig="sum(Tensor x, int[] dims={}, bool keepdim=false)",
        method=True,
        python="both",
        py_names={"dims": "dim"},
        doc="The sum over dims (negative dims wrap; a duplicate is an error; none: every dim),\n"
        "which are dropped from the shape unless keepdim. Floats accumulate in double and bool is\n"
        "refused, as reduce_sum_to.",
    ),
    dict(
        sig="expand_backward(Tensor dy, Shape input_shape)",
        doc="Sums dy over the dims that expand broadcast; the result has input_shape.",
    ),
    dict(
        sig="repeat_backward(Tensor dy, Shape input_shape, int[] repeats)",
        doc="Sums dy over the tiles of repeat(input, repeats); the result has input_shape.",
    ),
    dict(sig="neg(Tensor x)", method=True, python="both", doc="-x (integers wrap as two's complement); bool is refused, as PyTorch's."),
    dict(sig="abs(Tensor x)", method=True, python="both", doc="|x| (the most negative integer is itself, as PyTorch's)."),
    dict(sig="sign(Tensor x)", method=True, python="both", doc="-1, 0 or 1 by the sign of each element (NaN stays NaN)."),
    dict(sig="relu(Tensor x)", method=True, python="both", doc="max(x, 0) (NaN stays NaN)."),
    dict(sig="exp(Tensor x)", method=True, python="both", doc="e ** x; an integer or bool x is cast to float32 first (so for every floating function)."),
    dict(sig="log(Tensor x)", method=True, python="both", doc="The natural logarithm (-inf at 0, NaN below)."),
    dict(sig="sqrt(Tensor x)", method=True, python="both", doc="The square root (NaN below 0)."),
    dict(sig="rsqrt(Tensor x)", method=True, python="both", doc="1 / sqrt(x)."),
    dict(sig="sin(Tensor x)", method=True, python="both", doc="The sine."),
    dict(sig="cos(Tensor x)", method=True, python="both", doc="The cosine."),
    dict(sig="tanh(Tensor x)", method=True, python="both", doc="The hyperbolic tangent."),
    dict(sig="sigmoid(Tensor x)", method=True, python="both", doc="1 / (1 + e ** -x)."),
    dict(sig="erf(Tensor x)", method=True, python="both", doc="The error function."),
    dict(sig="silu(Tensor x)", method=True, python="function", doc="x * sigmoid(x) (nn.functional.silu)."),
    dict(
        sig="gelu(Tensor x, str approximate=\"none\")",
        method=True,
        python="function",
        doc="x * Phi(x), Phi the standard normal CDF; approximate=\"tanh\": PyTorch's tanh form\n"
        "0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x ** 3))) (nn.functional.gelu).",
    ),
    dict(
        sig="pow(Tensor x, double exponent)",
        op="pow_scalar",
        method=True,
        doc="x ** exponent elementwise, in a float dtype (an integer x is cast to float32). (Python:\n"
        "ofl.pow and Tensor.pow take a number or a tensor exponent, and a number base.)",
    ),
    dict(sig="eq(Tensor input, Tensor other)", method=True, python="both",
         doc="input == other elementwise, with broadcasting, compared in the promoted type: a bool tensor\n"
         "(the == operator; a number is a wrapped number)."),
    dict(sig="ne(Tensor input, Tensor other)", method=True, python="both", doc="input != other, as eq."),
    dict(sig="lt(Tensor input, Tensor other)", method=True, python="both", doc="input < other, as eq."),
    dict(sig="le(Tensor input, Tensor other)", method=True, python="both", doc="input <= other, as eq."),
    dict(sig="gt(Tensor input, Tensor other)", method=True, python="both", doc="input > other, as eq."),
    dict(sig="ge(Tensor input, Tensor other)", method=True, python="both", doc="input >= other, as eq."),
    dict(sig="maximum(Tensor input, Tensor other)", method=True, python="both",
         doc="The larger of input and other elementwise, with broadcasting, in their promoted type (a NaN\n"
         "operand gives NaN); gradient g to the larger, g / 2 to each on a tie."),
    dict(sig="minimum(Tensor input, Tensor other)", method=True, python="both", doc="The smaller, as maximum."),
    dict(sig="where(Tensor condition, Tensor input, Tensor other)", python="function",
         py_names={"condition": "condition"},
         doc="input where condition (a bool tensor) is true, else other, elementwise with broadcasting\n"
         "of all three; input and other in their promoted type."),
    dict(sig="logical_and(Tensor input, Tensor other)", method=True, python="both",
         doc="Whether both are nonzero (NaN counts as nonzero): a bool tensor, any dtypes."),
    dict(sig="logical_or(Tensor input, Tensor other)", method=True, python="both",
         doc="Whether either is nonzero: a bool tensor, any dtypes."),
    dict(sig="logical_xor(Tensor input, Tensor other)", method=True, python="both",
         doc="Whether exactly one is nonzero: a bool tensor, any dtypes."),
    dict(sig="logical_not(Tensor input)", method=True, python="both", doc="Whether input is zero: a bool tensor."),
    dict(sig="bitwise_and(Tensor input, Tensor other)", method=True, python="both",
         doc="input & other on integer and bool tensors (the & operator; logical and on bool)."),
    dict(sig="bitwise_or(Tensor input, Tensor other)", method=True, python="both",
         doc="input | other on integer and bool tensors (the | operator)."),
    dict(sig="bitwise_xor(Tensor input, Tensor other)", method=True, python="both",
         doc="input ^ other on integer and bool tensors (the ^ operator)."),
    dict(sig="bitwise_not(Tensor input)", method=True, python="both",
         doc="~input on integer tensors, not input on bool ones (the ~ operator)."),
    dict(sig="clamp(Tensor x, Scalar min, Scalar max)", method=True, python="both", body="manual",
         doc="min(max(x, min), max) elementwise (min > max gives max; NaN stays NaN); an integer x with\n"
         "a fractional bound is cast to float32 first, bool is refused. Gradient: g where\n"
         "min <= x <= max. (Python: clamp(min=None, max=None), one bound at least.)"),
    dict(sig="clamp_min(Tensor x, Scalar min)", method=True, python="both", body="manual",
         doc="max(x, min), as clamp."),
    dict(sig="clamp_max(Tensor x, Scalar max)", method=True, python="both", body="manual",
         doc="min(x, max), as clamp."),
    dict(sig="mean(Tensor x, int[] dims={}, bool keepdim=false)", method=True, python="both",
         py_names={"dims": "dim"},
         doc="The mean over dims (none: every dim; as sum's), float dtypes only (cast an integer\n"
         "tensor first, as torch.mean asks); no elements give NaN."),
    dict(sig="amax(Tensor x, int[] dims={}, bool keepdim=false)", method=True, python="both",
         py_names={"dims": "dim"},
         doc="The largest element over dims (none: every dim; a NaN wins); the gradient is split evenly\n"
         "among the elements equal to it. A reduced dim of size 0 is refused (no identity)."),
    dict(sig="amin(Tensor x, int[] dims={}, bool keepdim=false)", method=True, python="both",
         py_names={"dims": "dim"}, doc="The smallest element over dims, as amax."),
    dict(sig="logsumexp(Tensor x, int[] dims={}, bool keepdim=false)", method=True, python="both",
         py_names={"dims": "dim"},
         doc="log(sum(exp(x))) over dims (none: every dim), computed stably from the max; an integer\n"
         "x is cast to float32 first."),
    dict(sig="max_dim(Tensor x, int dim)", body="manual",
         doc="The largest element along dim, the dim kept as 1 (the values of the max_dim op, whose\n"
         "indices ofl::max(x, dim) returns too)."),
    dict(sig="min_dim(Tensor x, int dim)", body="manual", doc="The smallest element along dim, as max_dim."),
    dict(sig="argmax(Tensor x, int? dim=None, bool keepdim=false)", op="max_dim", method=True,
         python="both", body="manual",
         doc="The int64 index of the largest element along dim (the first among ties; a NaN wins), or\n"
         "of the flattened tensor when dim is None."),
    dict(sig="argmin(Tensor x, int? dim=None, bool keepdim=false)", op="min_dim", method=True,
         python="both", body="manual", doc="The index of the smallest element, as argmax."),
    dict(sig="mm(Tensor x, Tensor mat2)", method=True, python="both", body="manual",
         doc="The matrix product of x (m x k) and mat2 (k x n), as torch.mm: one dtype (not bool);\n"
         "each operand read in place by the GEMM when its strides allow (transposed views too),\n"
         "else copied first. Gradients g @ mat2^T and x^T @ g."),
    dict(sig="bmm(Tensor x, Tensor mat2)", method=True, python="both", body="manual",
         doc="The matrix products of a batch: x (b x m x k) and mat2 (b x k x n) give b x m x n, as\n"
         "torch.bmm."),
    dict(sig="matmul(Tensor x, Tensor other)", op="mm", method=True, python="both", body="manual",
         doc="The product with torch.matmul's rules: 1-dim by 1-dim a 0-dim dot product; a 1-dim\n"
         "operand taken as a row (left) or a column (right), that dim removed from the result;\n"
         "more than 2 dims a batch of matrices, the batch dims broadcast (a batch by a matrix\n"
         "folds the batch into the rows: one GEMM)."),
    dict(sig="softmax(Tensor x, int dim)", method=True, python="both",
         doc="exp(x - max) / sum(exp(x - max)) along dim, the max and the sum found in one pass over\n"
         "each row; a float x (cast an integer one first). Gradient y * (g - sum(g * y))."),
    dict(sig="log_softmax(Tensor x, int dim)", method=True, python="both",
         doc="x - max - log(sum(exp(x - max))) along dim, as softmax; stable for large values.\n"
         "Gradient g - exp(y) * sum(g)."),
    dict(sig="mse_loss(Tensor x, Tensor target, str reduction=\"mean\")", op="sub", python="function",
         body="manual", py_names={"x": "input"},
         doc="(x - target)^2, broadcast, then reduction \"mean\" (of every element), \"sum\" or\n"
         "\"none\", as torch.nn.functional.mse_loss."),
    dict(
        sig="to(Tensor x, DType dtype)",
        op="cast",
        method=True,
        body="manual",
        doc="x's values converted to dtype (x itself when it has that dtype): floats to integers\n"
        "truncate toward zero and saturate (NaN gives 0), integers wrap, anything to bool is\n"
        "x != 0. Gradient: cast back to x's dtype; an integer result has none.",
    ),
]
