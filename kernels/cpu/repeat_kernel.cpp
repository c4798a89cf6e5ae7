// The CPU "repeat" kernel: tiles a strided input into a contiguous output (torch.Tensor.repeat),
// moving whole contiguous runs rather than single elements.
//
// Every output element equals the one at (index mod input shape). The kernel works in three
// passes over the output viewed as rows of its (merged) innermost dim:
//   1. the input is copied once into the "first tile" (the rows and columns whose index is already
//      below the input shape),
//   2. each first-tile row replicates its leading run by doubling memcpys until it is a prefix of
//      at least kPieceBytes (so later copies move large pieces from cache),
//   3. every other byte of the output is copied from a first-tile prefix, with consecutive pieces
//      coalesced into one memcpy.
// Each pass reads only what an earlier pass wrote, so each can be split freely over threads.
//
// When the innermost run is contiguous in the input and long (kDirectTileBytes or more), the
// passes are skipped: one pass copies every output row straight from its input row. The reads
// then come from the input (smaller than the first tile, so more of it stays in cache), and no
// serial first pass holds back the parallel ones.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <tbb/blocked_range.h>

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/stream_copy.h"
#include "kernels/index_util.h"
#include "kernels/kernel_checks.h"
#include "kernels/parallel.h"
#include "kernels/register_kernel.h"
#include "oneflow_lite/error.h"

namespace ofl::kernels::cpu {

namespace {

constexpr int64_t kParallelBytes = 256 << 10;
constexpr int64_t kGrainBytes = 64 << 10;
// Replicated prefixes grow to at least this size: big enough that a memcpy of one is efficient,
// small enough to stay in L1 while it is copied again and again.
constexpr int64_t kPieceBytes = 8 << 10;
// Outputs up to this size are gathered element by element in one pass: for a few dozen elements the
// three passes' set-up costs several times the copy itself.
constexpr int64_t kGatherBytes = 4 << 10;
// Innermost runs at least this long are copied from the input directly: each memcpy then moves
// enough bytes that its call costs little, and no prefix needs building.
constexpr int64_t kDirectTileBytes = 2 << 10;
// The direct pass splits the output at multiples of this, so two threads never write one line.
constexpr int64_t kLineBytes = 64;

// The output's outer dims (out_size = repeats * in_size), which index its rows; a row's source is
// at the sum over them of (index mod in_size) * stride.
struct OuterDims {
  int n = 0;
  int64_t out_size[kMaxDims];
  int64_t in_size[kMaxDims];
  int64_t stride[kMaxDims];
};

// Walks the rows of OuterDims in order, keeping the current row's source offset: Seek costs a
// division per dim, Next is amortised constant.
class RowSource {
 public:
  RowSource(const OuterDims& d, int64_t row) : d_(d) {
    int64_t rest = row;
    for (int i = d_.n - 1; i >= 0; --i) {
      if (rest == 0) {  // skip the divisions a serial walk (row 0) would otherwise pay
        o_[i] = m_[i] = 0;
        continue;
      }
      const int64_t q = rest / d_.out_size[i];
      o_[i] = rest - q * d_.out_size[i];
      m_[i] = o_[i] % d_.in_size[i];
      offset_ += m_[i] * d_.stride[i];
      rest = q;
    }
  }
  int64_t offset() const { return offset_; }
  void Next() {
    for (int i = d_.n - 1; i >= 0; --i) {
      if (++o_[i] < d_.out_size[i]) {
        if (++m_[i] == d_.in_size[i]) {
          m_[i] = 0;
          offset_ -= (d_.in_size[i] - 1) * d_.stride[i];
        } else {
          offset_ += d_.stride[i];
        }
        return;
      }
      offset_ -= m_[i] * d_.stride[i];
      o_[i] = 0;
      m_[i] = 0;
    }
  }

 private:
  const OuterDims& d_;
  int64_t o_[kMaxDims];  // the row's multi-index
  int64_t m_[kMaxDims];  // o_ mod in_size
  int64_t offset_ = 0;
};

// The direct pass's view of the output: rows of row_bytes over the outer simplified dims, each
// made of copies of one input run of tile_bytes. outer.stride is in bytes.
struct DirectPlan {
  OuterDims outer;
  int64_t row_bytes = 0;
  int64_t tile_bytes = 0;
  bool stream = false;  // the output is large enough for StreamBytes
};

// The output bytes [begin, end): byte c of a row is byte (c mod tile_bytes) of the row's input
// run, which starts at the sum of (row index mod in_size) * in_stride over the outer dims.
void CopyRowsFromInput(const DirectPlan& p, const char* in, char* out, int64_t begin, int64_t end) {
  int64_t row = begin / p.row_bytes;
  int64_t col = begin - row * p.row_bytes;
  RowSource source(p.outer, row);
  char* dst = out + row * p.row_bytes;
  int64_t pos = begin;
  while (pos < end) {
    const char* src = in + source.offset();
    const int64_t col_end = std::min(p.row_bytes, col + (end - pos));
    for (int64_t c = col; c < col_end;) {
      const int64_t sc = c % p.tile_bytes;
      const int64_t n = std::min(p.tile_bytes - sc, col_end - c);
      if (p.stream) {
        StreamBytes(dst + c, src + sc, n);
      } else {
        std::memcpy(dst + c, src + sc, static_cast<size_t>(n));
      }
      c += n;
    }
    pos += col_end - col;
    if (pos >= end) break;
    col = 0;
    dst += p.row_bytes;
    source.Next();
  }
  if (p.stream) StreamFence();
}

// The output as rows of row_len elements; the outer dims index rows, and outer.stride is in rows.
struct RowPlan {
  OuterDims outer;
  int64_t row_len = 0;  // elements per output row
  int64_t prefix = 0;   // elements of each first-tile row written by passes 1 and 2
  int64_t es = 0;       // element size in bytes
};

// Gathers adjacent (dst, src) pieces into one memcpy.
class CoalescingCopier {
 public:
  void Add(char* dst, const char* src, int64_t n) {
    if (dst == dst_ + len_ && src == src_ + len_) {
      len_ += n;
      return;
    }
    Flush();
    dst_ = dst;
    src_ = src;
    len_ = n;
  }
  void Flush() {
    if (len_ > 0) CopyBytes(dst_, src_, static_cast<size_t>(len_));
    len_ = 0;
  }

 private:
  char* dst_ = nullptr;
  const char* src_ = nullptr;
  int64_t len_ = 0;
};

// Pass 3 for the output elements [begin, end): out[row][col] = out[row mod tile][col mod prefix].
// A row is a first-tile row exactly when its source row is itself; its prefix is already written.
void FillFromPrefixes(const RowPlan& p, char* out, int64_t begin, int64_t end) {
  const int64_t len = p.row_len;
  const int64_t prefix = p.prefix;
  const int64_t es = p.es;
  int64_t row = begin / len;
  int64_t col = begin - row * len;
  RowSource source(p.outer, row);
  CoalescingCopier copier;
  int64_t pos = begin;
  while (pos < end) {
    const int64_t src_row = source.offset();
    const int64_t col_end = std::min(len, col + (end - pos));
    int64_t c = col;
    if (src_row == row && c < prefix) c = prefix;
    char* dst_base = out + row * len * es;
    const char* src_base = out + src_row * len * es;
    // Only a piece that starts mid-row can start mid-prefix; the ones after it start at 0.
    for (int64_t sc = c < prefix ? c : c % prefix; c < col_end; sc = 0) {
      const int64_t n = std::min(prefix - sc, col_end - c);
      copier.Add(dst_base + c * es, src_base + sc * es, n * es);
      c += n;
    }
    pos += col_end - col;
    col = 0;
    ++row;
    source.Next();
  }
  copier.Flush();
}

// Pass 2 for first-tile rows [begin, end) (row-major over in_size): doubles the leading `tile`
// elements of each row up to `prefix`.
void DoublePrefixes(const LoopDims<1>& tile_rows, char* out, int64_t tile_bytes,
                    int64_t prefix_bytes, int64_t begin, int64_t end) {
  LoopCursor<1> c;
  SeekCursor(tile_rows, tile_rows.ndim, begin, &c);
  for (int64_t r = begin; r < end; ++r) {
    char* row = out + c.offset[0];
    for (int64_t have = tile_bytes; have < prefix_bytes;) {
      const int64_t n = std::min(have, prefix_bytes - have);
      CopyBytes(row + have, row, static_cast<size_t>(n));
      have += n;
    }
    AdvanceCursor(tile_rows, tile_rows.ndim, &c);
  }
}

// A small output, built block by block in row-major order over the simplified dims (sizes s,
// repeats r, input strides st in elements): the innermost dim gathers its s elements once and then
// repeats them by copying the output forward; every outer dim builds its s sub-blocks and then
// copies that span r - 1 more times. Each output element is written once, and only the innermost
// gather reads the input.
template <class T>
void FillBlock(const int64_t* s, const int64_t* r, const int64_t* st, const int64_t* block, int d,
               int last, const T* in, T* out) {
  const int64_t sd = s[d];
  if (d == last) {
    const int64_t step = st[d];
    for (int64_t j = 0; j < sd; ++j) out[j] = in[j * step];
    // A forward copy at distance sd repeats the tile: out[sd + k] = out[k].
    T* rest = out + sd;
    for (int64_t k = 0, n = sd * (r[d] - 1); k < n; ++k) rest[k] = out[k];
    return;
  }
  const int64_t sub = block[d + 1];
  for (int64_t j = 0; j < sd; ++j) {
    FillBlock(s, r, st, block, d + 1, last, in + j * st[d], out + j * sub);
  }
  const int64_t span = sd * sub;
  for (int64_t k = 1; k < r[d]; ++k) {
    std::memcpy(out + k * span, out, static_cast<size_t>(span) * sizeof(T));
  }
}

template <class T>
void GatherSmall(const int64_t* s, const int64_t* r, const int64_t* st, int dims, const T* in,
                 T* out) {
  int64_t block[kMaxDims];  // block[d]: output elements spanned by dims [d, dims)
  int64_t acc = 1;
  for (int d = dims - 1; d >= 0; --d) block[d] = acc *= s[d] * r[d];
  FillBlock(s, r, st, block, 0, dims - 1, in, out);
}

}  // namespace

void RepeatKernel(const KernelContext& ctx) {
  // Validated first (kernel_checks.h), stopping on an empty output before merging dims: an empty
  // output's other dims may be huge, and their products would overflow.
  if (CheckRepeatArgs(ctx)) return;
  const TensorArg& in = ctx.inputs[0];
  const TensorArg& out = ctx.outputs[0];
  const int n = out.shape.ndim();
  const int k = in.shape.ndim();
  const IntList repeats = ctx.attributes.get_ints("repeats");
  const int64_t es = static_cast<int64_t>(element_size(out.dtype));

  // Simplified dims: in size s, repeats r, input stride st. Dims with s == r == 1 vanish; a dim
  // merges into the previous one when it is not repeated and the two are contiguous in the input
  // (or the previous one has s == 1), or when both are pure repeats of a single element.
  int64_t s[kMaxDims];
  int64_t r[kMaxDims];
  int64_t st[kMaxDims];
  int dims = 0;
  for (int i = 0; i < n; ++i) {
    const int j = i - (n - k);
    const int64_t si = j < 0 ? 1 : in.shape[j];
    const int64_t ri = repeats[i];
    if (si == 1 && ri == 1) continue;
    const int64_t sti = si == 1 ? 0 : in.stride[j];
    if (dims > 0) {
      const int p = dims - 1;
      if (ri == 1 && (s[p] == 1 || st[p] == sti * si)) {
        s[p] *= si;
        st[p] = sti;
        continue;
      }
      if (s[p] == 1 && si == 1) {
        r[p] *= ri;
        continue;
      }
    }
    s[dims] = si;
    r[dims] = ri;
    st[dims] = sti;
    ++dims;
  }
  if (dims == 0) {
    std::memcpy(out.data, in.data, static_cast<size_t>(es));
    return;
  }

  int64_t total_bytes = es;
  for (int i = 0; i < dims; ++i)
    total_bytes *= s[i] * r[i];  // no overflow: out's shape was checked
  if (total_bytes <= kGatherBytes) {
    switch (es) {
      case 1:
        GatherSmall(s, r, st, dims, static_cast<const uint8_t*>(in.data),
                    static_cast<uint8_t*>(out.data));
        return;
      case 2:
        GatherSmall(s, r, st, dims, static_cast<const uint16_t*>(in.data),
                    static_cast<uint16_t*>(out.data));
        return;
      case 4:
        GatherSmall(s, r, st, dims, static_cast<const uint32_t*>(in.data),
                    static_cast<uint32_t*>(out.data));
        return;
      case 8:
        GatherSmall(s, r, st, dims, static_cast<const uint64_t*>(in.data),
                    static_cast<uint64_t*>(out.data));
        return;
      default:
        break;  // the general passes move raw bytes of any size
    }
  }

  char* const base = static_cast<char*>(out.data);
  if (st[dims - 1] == 1 && s[dims - 1] * es >= kDirectTileBytes) {
    DirectPlan d;
    d.outer.n = dims - 1;
    d.tile_bytes = s[dims - 1] * es;
    d.row_bytes = d.tile_bytes * r[dims - 1];
    d.stream = total_bytes >= kStreamBytes;
    for (int i = 0; i < d.outer.n; ++i) {
      d.outer.out_size[i] = s[i] * r[i];
      d.outer.in_size[i] = s[i];
      d.outer.stride[i] = st[i] * es;
    }
    const char* src = static_cast<const char*>(in.data);
    if (total_bytes > kParallelBytes) {
      const int64_t lines = (total_bytes + kLineBytes - 1) / kLineBytes;
      ParallelFor(tbb::blocked_range<int64_t>(0, lines, kGrainBytes / kLineBytes),
                  [&](const tbb::blocked_range<int64_t>& range) {
                    CopyRowsFromInput(d, src, base, range.begin() * kLineBytes,
                                      std::min(total_bytes, range.end() * kLineBytes));
                  });
    } else {
      CopyRowsFromInput(d, src, base, 0, total_bytes);
    }
    return;
  }

  RowPlan p;
  p.outer.n = dims - 1;
  p.es = es;
  const int64_t tile = s[dims - 1];
  p.row_len = tile * r[dims - 1];
  int64_t rows = 1;
  for (int i = p.outer.n - 1; i >= 0; --i) {
    p.outer.in_size[i] = s[i];
    p.outer.out_size[i] = s[i] * r[i];
    p.outer.stride[i] = rows;
    rows *= p.outer.out_size[i];
  }
  const int64_t total = rows * p.row_len;
  const bool parallel = total * es > kParallelBytes;

  // Pass 1: the input into the first tile.
  int64_t tile_stride[kMaxDims];
  for (int i = 0; i < p.outer.n; ++i) tile_stride[i] = p.outer.stride[i] * p.row_len;
  tile_stride[dims - 1] = 1;
  StridedCopy(base, tile_stride, in.data, st, s, dims, static_cast<size_t>(es));

  // Pass 2: grow each first-tile row's run to a prefix of whole tiles worth copying.
  const int64_t tile_bytes = tile * es;
  const int64_t tiles_per_piece = std::max<int64_t>(1, (kPieceBytes + tile_bytes - 1) / tile_bytes);
  p.prefix = std::min(p.row_len, tile * tiles_per_piece);
  LoopDims<1> tile_rows;
  for (int i = 0; i < p.outer.n; ++i) PushDim(&tile_rows, s[i], {tile_stride[i] * es});
  const int64_t num_tile_rows = NumElements(tile_rows);
  if (p.prefix > tile) {
    const int64_t prefix_bytes = p.prefix * es;
    if (parallel && num_tile_rows * prefix_bytes > kParallelBytes) {
      const int64_t grain = std::max<int64_t>(1, kGrainBytes / prefix_bytes);
      ParallelFor(tbb::blocked_range<int64_t>(0, num_tile_rows, grain),
                  [&](const tbb::blocked_range<int64_t>& range) {
                    DoublePrefixes(tile_rows, base, tile_bytes, prefix_bytes, range.begin(),
                                   range.end());
                  });
    } else {
      DoublePrefixes(tile_rows, base, tile_bytes, prefix_bytes, 0, num_tile_rows);
    }
  }

  // Pass 3: everything else, from the prefixes.
  if (p.prefix == p.row_len && num_tile_rows == rows) return;
  if (parallel) {
    ParallelFor(tbb::blocked_range<int64_t>(0, total, kGrainBytes / es),
                [&](const tbb::blocked_range<int64_t>& range) {
                  FillFromPrefixes(p, base, range.begin(), range.end());
                });
  } else {
    FillFromPrefixes(p, base, 0, total);
  }
}
OFL_REGISTER_CPU_KERNEL("repeat", RepeatKernel, CheckRepeatArgs);

}  // namespace ofl::kernels::cpu
