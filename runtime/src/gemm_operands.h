// What the two matrix-product extern stages (blas.cpp on the host, cublas.cpp on a CUDA device)
// share: how Halide's buffers become a BLAS call's operands, and the answer to Halide's bounds
// query. Halide order: an operand's dim 0 is its columns, dim 1 its rows.
#pragma once

#include <HalideRuntime.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>

namespace hc::gemm {

// An operand as a row-major BLAS takes it: an element offset from the buffer's first element
// (where `host`, or a device's pointer, points), transposed or not, and a leading dimension.
// Lead 0: neither dimension has a unit stride, so no BLAS call can read it as it is.
struct Operand {
    int64_t offset = 0;
    bool transpose = false;
    int64_t lead = 0;
};

// `buf`'s rows [row_min, ...) and columns [col_min, ...).
inline Operand operand(const halide_buffer_t *buf, int64_t col_min, int64_t row_min) {
    const halide_dimension_t &col = buf->dim[0], &row = buf->dim[1];
    Operand o;
    o.offset = (row_min - row.min) * row.stride + (col_min - col.min) * col.stride;
    // BLAS takes rows (or, transposed, columns) at a positive distance of at least a row's
    // length: a broadcast row (stride 0), reversed rows or overlapping ones are refused.
    auto lead = [](const halide_dimension_t &unit, const halide_dimension_t &other) -> int64_t {
        const int64_t length = std::max<int64_t>(unit.extent, 1);
        if (other.extent <= 1) return length;
        return other.stride >= length ? other.stride : 0;
    };
    if (col.stride == 1) {
        o.lead = lead(col, row);
    } else if (row.stride == 1) {
        o.transpose = true;
        o.lead = lead(row, col);
    }
    return o;
}

// Whether `buf` is a 2-D product's operand given with more than two dims: an array whose memory
// the lowering found to be the operand, row-major (reduction_rules' operand_view): a C-contiguous
// input whose leading axes a reshape merged into rows (`x.reshape(-1, k) @ w`), or a region
// stored with its axes in the order the operand walks them (`(p @ v).transpose(0, 2, 1, 3)
// .reshape(rows, width)`). Its dims, by stride, are the matrix's columns, then its rows.
inline bool read_as_matrix(const halide_buffer_t *buf, const halide_buffer_t *out) {
    return out->dimensions == 2 && buf->dimensions > 2;
}

// `buf` as the matrix of `columns` columns a product reads: itself, or where it is read as a
// matrix (read_as_matrix) `view`, the same memory as two dims: its dims of more than one element,
// by stride, the innermost ones `columns` in all, each group stepping over the whole of the dim
// inside it. Null where they do not (no one matrix in memory). An empty array is itself: the
// call reads none of it.
inline const halide_buffer_t *as_matrix(const halide_buffer_t *buf, const halide_buffer_t *out, int64_t columns,
                                        halide_buffer_t *view, halide_dimension_t dims[2]) {
    if (!read_as_matrix(buf, out)) return buf;
    const halide_dimension_t *sorted[16];
    int n = 0;
    for (int d = 0; d < buf->dimensions; ++d) {
        const halide_dimension_t &dim = buf->dim[d];
        if (dim.extent == 0) return buf;
        if (dim.min != 0 || n == 16) return nullptr;
        if (dim.extent > 1) sorted[n++] = &dim;
    }
    std::sort(sorted, sorted + n, [](const halide_dimension_t *x, const halide_dimension_t *y) { return x->stride < y->stride; });
    // Each group: its count of elements and the stride of its first dim; its dims must chain.
    int next = 0;
    auto group = [&](int64_t count, int64_t *stride) {
        int64_t elements = 1, step = -1;
        *stride = next < n ? sorted[next]->stride : 1;
        while (elements < count && next < n) {
            const halide_dimension_t &dim = *sorted[next++];
            if (dim.stride <= 0 || (step >= 0 && dim.stride != step)) return false;
            elements *= dim.extent;
            step = int64_t{dim.stride} * dim.extent;
        }
        return elements == count;
    };
    int64_t total = 1;
    for (int i = 0; i < n; ++i) total *= sorted[i]->extent;
    if (columns <= 0 || total % columns != 0 || total / columns > INT32_MAX) return nullptr;
    int64_t column_stride, row_stride;
    if (!group(columns, &column_stride) || !group(total / columns, &row_stride) || next != n) return nullptr;
    if (total == columns) row_stride = columns * column_stride;   // one row: any stride past it
    *view = *buf;
    dims[0] = halide_dimension_t(0, static_cast<int32_t>(columns), static_cast<int32_t>(column_stride));
    dims[1] = halide_dimension_t(0, static_cast<int32_t>(total / columns), static_cast<int32_t>(row_stride));
    view->dimensions = 2;
    view->dim = dims;
    return view;
}

// The columns of a right operand of k rows: its elements over k (0 where k is not positive).
inline int64_t columns_of(const halide_buffer_t *b, int32_t k) {
    int64_t elements = 1;
    for (int d = 0; d < b->dimensions; ++d) elements *= b->dim[d].extent;
    return k > 0 ? elements / k : 0;
}

// Whether the matrices a product reads hold what it reads: a's rows out's, b's rows k. Halide
// checks this itself for operands passed as they are (the bounds query's answer), not for
// those read as matrices, whose query it leaves as it is.
inline bool operands_cover(const halide_buffer_t *a, const halide_buffer_t *b, int32_t k, const halide_buffer_t *out) {
    const halide_dimension_t &m = out->dim[1];
    return a->dim[1].min <= m.min && m.min + m.extent <= a->dim[1].min + a->dim[1].extent &&
           b->dim[1].min <= 0 && k <= b->dim[1].min + b->dim[1].extent;
}

// The leading dimension of `out` for BLAS (0: its rows are not apart by at least a row, or its
// columns are not adjacent, so no call can write it).
inline int64_t output_lead(const halide_buffer_t *out) {
    const halide_dimension_t &n = out->dim[0], &m = out->dim[1];
    if (n.stride != 1) return 0;
    if (m.extent <= 1) return std::max<int64_t>(n.extent, 1);
    return m.stride >= std::max<int64_t>(n.extent, 1) ? m.stride : 0;
}

// A batched product's batch (out's dims past its two matrix dims, Halide order) as one count of
// matrices a fixed stride apart in each buffer, as cuBLAS's strided batched call takes it.
struct Batch {
    int64_t count = 1;
    int64_t a_stride = 0, b_stride = 0, out_stride = 0;   // elements; 0: one matrix for every product
    int64_t a_offset = 0, b_offset = 0;                   // elements from the buffer's first to out's first batch
    bool ok = true;   // false: some buffer's batch dims are not one run of equal strides
};

// `buf`'s stride over out's batch, and the offset of out's first batch in it: a 2-D operand is one
// matrix for all (stride 0); else its batch dims hold out's range of them (lowering's library call
// passes only such operands), and out's batches in it collapse into one stride where each dim
// steps past the last dim's whole range.
inline bool batch_stride(const halide_buffer_t *buf, const halide_buffer_t *out, int64_t *stride, int64_t *offset) {
    *stride = 0;
    *offset = 0;
    if (buf->dimensions == 2) return true;
    if (buf->dimensions != out->dimensions) return false;
    int64_t next = 0;   // the stride the next dim must have (0: not yet known)
    for (int d = 2; d < out->dimensions; ++d) {
        const halide_dimension_t &dim = buf->dim[d], &range = out->dim[d];
        if (range.extent <= 0) continue;   // an empty batch: no call
        if (range.min < dim.min || range.min + range.extent > dim.min + dim.extent) return false;
        *offset += int64_t{range.min - dim.min} * dim.stride;
        if (range.extent == 1) continue;
        if (*stride == 0) {
            *stride = dim.stride;
        } else if (dim.stride != next) {
            return false;
        }
        next = int64_t{dim.stride} * range.extent;
    }
    return true;
}

inline Batch batch_of(const halide_buffer_t *a, const halide_buffer_t *b, const halide_buffer_t *out) {
    Batch batch;
    for (int d = 2; d < out->dimensions; ++d) batch.count *= out->dim[d].extent;
    int64_t out_offset = 0;
    batch.ok = batch_stride(a, out, &batch.a_stride, &batch.a_offset) &&
               batch_stride(b, out, &batch.b_stride, &batch.b_offset) &&
               batch_stride(out, out, &batch.out_stride, &out_offset);
    return batch;
}

// Halide's bounds query (any buffer without data): what the operands must hold for the region
// of `out` it asks for (the operands' buffers here are its query copies, even where they carry
// data): a's rows are out's rows with all k columns; b's columns are out's columns with all k
// rows; an operand with batch dims, out's batches. Returns whether the call was a query.
inline bool answer_bounds_query(halide_buffer_t *a, halide_buffer_t *b, int32_t k, const halide_buffer_t *out) {
    if (!out->is_bounds_query() && !a->is_bounds_query() && !b->is_bounds_query()) return false;
    for (halide_buffer_t *operand : {a, b}) {
        for (int d = 2; d < operand->dimensions && d < out->dimensions; ++d) {
            operand->dim[d].min = out->dim[d].min;
            operand->dim[d].extent = out->dim[d].extent;
        }
    }
    const halide_dimension_t &n = out->dim[0], &m = out->dim[1];
    // An operand read as a matrix (read_as_matrix) is needed whole: a range of its rows is no box
    // of its dims. Its query copy is left as it is: an input's holds the input's own dims, and a
    // region's stays empty, the region computed over the bounds the lowering gave it.
    if (!read_as_matrix(a, out)) {
        a->dim[0].min = 0;
        a->dim[0].extent = k;
        a->dim[1].min = m.min;
        a->dim[1].extent = m.extent;
    }
    if (!read_as_matrix(b, out)) {
        b->dim[0].min = n.min;
        b->dim[0].extent = n.extent;
        b->dim[1].min = 0;
        b->dim[1].extent = k;
    }
    return true;
}

}  // namespace hc::gemm
