// Structural checks of an ir::Kernel before codegen (see tile_ir.h for the contract).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/codegen/emit_expr.h"
#include "jit/codegen/emit_kernel.h"

namespace pto::jit {
namespace {

absl::Status Invalid(const ir::Kernel& k, const std::string& msg) {
  return absl::InvalidArgumentError(absl::StrCat("kernel '", k.name, "': ", msg));
}

absl::Status ValidateAccesses(const ir::Kernel& k) {
  const int rank = static_cast<int>(k.domain.size());
  for (size_t i = 0; i < k.accesses.size(); ++i) {
    const ir::Access& a = k.accesses[i];
    if (a.buffer < 0 || a.buffer >= k.num_buffers) {
      return Invalid(k, absl::StrCat("access a", i, " uses buffer ", a.buffer, ", expected [0, ",
                                     k.num_buffers, ")"));
    }
    const bool operand = k.kind == ir::KernelKind::kMatMul &&
                         (static_cast<int>(i) == k.a || static_cast<int>(i) == k.b);
    if (a.dtype != ir::DType::kF32 && (operand || a.dtype != ir::DType::kI32)) {
      return absl::UnimplementedError(absl::StrCat(
          "kernel '", k.name, "': access a", i, " has dtype ", std::string(ir::DTypeName(a.dtype)),
          operand ? "; matmul operands are f32" : "; only f32 and i32 are compiled"));
    }
    const int expected = operand ? rank + 1 : rank;
    if (static_cast<int>(a.strides.size()) != expected) {
      return Invalid(k, absl::StrCat("access a", i, " has ", a.strides.size(),
                                     " strides, expected ", expected));
    }
  }
  return absl::OkStatus();
}

// Each load has its access's dtype; kAcc (a sum, a row op's or a matmul's result) is f32.
absl::Status ValidateProgramDTypes(const ir::Kernel& k, const std::vector<ir::ExprNode>& program,
                                   const char* what) {
  for (size_t i = 0; i < program.size(); ++i) {
    const ir::ExprNode& n = program[i];
    ir::DType want = n.dtype;
    if (n.op == ir::ExprOp::kLoad) want = k.accesses[n.access].dtype;
    if (n.op == ir::ExprOp::kGather && !k.accesses[n.access].gather) {
      return Invalid(k, absl::StrCat(what, " node v", i, " (gather) reads access a", n.access,
                                     ", which is no gather access"));
    }
    if (n.op == ir::ExprOp::kAcc) want = ir::DType::kF32;
    if (n.dtype != want) {
      return Invalid(k, absl::StrCat(what, " node v", i, " (", ir::ExprOpName(n.op), ") is ",
                                     std::string(ir::DTypeName(n.dtype)), ", expected ",
                                     std::string(ir::DTypeName(want))));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePrograms(const ir::Kernel& k) {
  const int rank = static_cast<int>(k.domain.size());
  const int n = static_cast<int>(k.accesses.size());
  const bool anchored = k.kind != ir::KernelKind::kElementwise;
  if (!k.input.empty()) {
    absl::Status s = ValidateProgram(k.input, n, false, k.name + " input", rank);
    if (!s.ok()) return s;
    if (s = ValidateProgramDTypes(k, k.input, "input"); !s.ok()) return s;
    if (k.input_value >= 0 && k.input_value < static_cast<int>(k.input.size()) &&
        k.input[k.input_value].dtype != ir::DType::kF32) {
      return Invalid(k, "the input value of a reduction or row op must be f32");
    }
  }
  absl::Status s = ValidateProgram(k.output, n, anchored, k.name + " output", rank);
  if (!s.ok()) return s;
  if (s = ValidateProgramDTypes(k, k.output, "output"); !s.ok()) return s;
  for (size_t i = 0; i < k.stores.size(); ++i) {
    const ir::Store& st = k.stores[i];
    if (st.access < 0 || st.access >= n || st.value < 0 ||
        st.value >= static_cast<int>(k.output.size())) {
      continue;  // reported by ValidateKernel
    }
    if (k.output[st.value].dtype != k.accesses[st.access].dtype) {
      return Invalid(
          k, absl::StrCat("store ", i, " writes ",
                          std::string(ir::DTypeName(k.output[st.value].dtype)), " v", st.value,
                          " to ", std::string(ir::DTypeName(k.accesses[st.access].dtype)),
                          " access a", st.access));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateKind(const ir::Kernel& k) {
  const int rank = static_cast<int>(k.domain.size());
  const int n = static_cast<int>(k.accesses.size());
  switch (k.kind) {
    case ir::KernelKind::kElementwise:
      return ValidatePrograms(k);
    case ir::KernelKind::kReduce:
    case ir::KernelKind::kRowOp: {
      if (rank < 1) return Invalid(k, "needs a domain of rank >= 1");
      if (k.kind == ir::KernelKind::kReduce && (k.axis < 0 || k.axis >= rank)) {
        return Invalid(k, absl::StrCat("axis ", k.axis, " out of range for rank ", rank));
      }
      if (k.input_value < 0 || k.input_value >= static_cast<int>(k.input.size())) {
        return Invalid(k, absl::StrCat("input_value ", k.input_value, " is not a node of input"));
      }
      const bool grad = k.kind == ir::KernelKind::kRowOp && ir::IsRowGrad(k.row_op);
      if (grad != (k.input_dy >= 0) || k.input_dy >= static_cast<int>(k.input.size())) {
        return Invalid(k, absl::StrCat("input_dy ", k.input_dy,
                                       grad ? " is not a node of input" : " set for a forward op"));
      }
      return ValidatePrograms(k);
    }
    case ir::KernelKind::kMatMul:
      if (rank < 2) return Invalid(k, "matmul needs a domain of rank >= 2");
      if (k.a < 0 || k.a >= n || k.b < 0 || k.b >= n) {
        return Invalid(k, "matmul operands a/b must be access indices");
      }
      if (k.b_packed >= k.num_buffers) {
        return Invalid(k, absl::StrCat("b_packed slot ", k.b_packed, " is not a buffer slot"));
      }
      return ValidatePrograms(k);
    case ir::KernelKind::kScatterAdd: {
      if (rank != 4) return Invalid(k, "scatter_add needs the domain [P, N, M, Q]");
      if (k.a < 0 || k.a >= n || k.b < 0 || k.b >= n) {
        return Invalid(k, "scatter_add's updates a and indices b must be access indices");
      }
      if (k.accesses[k.a].dtype != ir::DType::kF32 || k.accesses[k.b].dtype != ir::DType::kI32) {
        return Invalid(k, "scatter_add reads f32 updates and i32 indices");
      }
      if (k.stores.size() != 1 || k.output.size() != 1 || k.output[0].op != ir::ExprOp::kAcc) {
        return Invalid(k, "scatter_add stores its sum (output [acc]) through one store");
      }
      return ValidatePrograms(k);
    }
  }
  return Invalid(k, "unknown kernel kind");
}

}  // namespace

absl::Status ValidateBufferExtents(const ir::Kernel& k) {
  if (static_cast<int>(k.buffer_extents.size()) != k.num_buffers) {
    return Invalid(k,
                   absl::StrCat("a checked kernel needs the extent of each of its ", k.num_buffers,
                                " buffer slots; it has ", k.buffer_extents.size()));
  }
  return absl::OkStatus();
}

absl::Status ValidateKernel(const ir::Kernel& k) {
  if (k.name.empty()) return absl::InvalidArgumentError("kernel has no name");
  if (k.num_buffers < 0) return Invalid(k, "negative num_buffers");
  const ir::TileConfig& c = k.config;
  if (c.vector_width < 0 || c.vector_width > 64) {
    return Invalid(k, absl::StrCat("config.vector_width ", c.vector_width, " not in [0, 64]"));
  }
  if (c.unroll < 1 || c.unroll > 16) {
    return Invalid(k, absl::StrCat("config.unroll ", c.unroll, " not in [1, 16]"));
  }
  // Bounds on code size, not on registers: a micro-tile beyond the register file
  // (ir::MatMulMicroTileRegisters) is valid, and spills.
  if (c.mr < 1 || c.mr > 32 || c.nr_vectors < 1 || c.nr_vectors > 16) {
    return Invalid(k, absl::StrCat("config.mr ", c.mr, " / nr_vectors ", c.nr_vectors,
                                   " not in [1, 32] / [1, 16]"));
  }
  if (c.kc < 0 || c.mc < 0 || c.panel_bytes < 0) {
    return Invalid(k, absl::StrCat("config.kc ", c.kc, " / mc ", c.mc, " / panel_bytes ",
                                   c.panel_bytes, " must not be negative"));
  }
  if (c.prefetch_b < 0 || c.prefetch_b > ir::TileConfig::kMaxPrefetchBytes) {
    return Invalid(k, absl::StrCat("config.prefetch_b ", c.prefetch_b, " not in [0, ",
                                   ir::TileConfig::kMaxPrefetchBytes, "]"));
  }
  if (c.pack_prefetch_rows < 0 || c.pack_prefetch_rows > ir::TileConfig::kMaxPackPrefetchRows) {
    return Invalid(k, absl::StrCat("config.pack_prefetch_rows ", c.pack_prefetch_rows,
                                   " not in [0, ", ir::TileConfig::kMaxPackPrefetchRows, "]"));
  }
  if (c.prefetch_inputs < 0 || c.prefetch_inputs > ir::TileConfig::kMaxPrefetchBytes) {
    return Invalid(k, absl::StrCat("config.prefetch_inputs ", c.prefetch_inputs, " not in [0, ",
                                   ir::TileConfig::kMaxPrefetchBytes, "]"));
  }
  if (c.loop_order != ir::LoopOrder::kPanelsOuter &&
      c.loop_order != ir::LoopOrder::kRowBlocksOuter) {
    return Invalid(k, absl::StrCat("config.loop_order ", static_cast<int>(c.loop_order),
                                   " is not a loop order"));
  }
  absl::Status s = ValidateAccesses(k);
  if (!s.ok()) return s;
  s = ValidateKind(k);
  if (!s.ok()) return s;
  for (size_t i = 0; i < k.stores.size(); ++i) {
    const ir::Store& st = k.stores[i];
    if (st.access < 0 || st.access >= static_cast<int>(k.accesses.size())) {
      return Invalid(k, absl::StrCat("store ", i, " writes access ", st.access, " out of range"));
    }
    if (st.value < 0 || st.value >= static_cast<int>(k.output.size())) {
      return Invalid(k, absl::StrCat("store ", i, " value v", st.value, " is not an output node"));
    }
  }
  return absl::OkStatus();
}

}  // namespace pto::jit
