#include "jit/passes/plan_in_place_outputs.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "jit/passes/default_tile_configs.h"
#include "jit/passes/mark_in_place.h"

namespace pto::jit {
namespace {

bool Uses(const ir::KernelCall& call, int buffer) {
  return std::find(call.buffers.begin(), call.buffers.end(), buffer) != call.buffers.end();
}

// The store of `call` to TileGraph buffer `buffer`, or null.
const ir::Store* StoreTo(const ir::KernelCall& call, int buffer) {
  for (const ir::Store& s : call.kernel.stores) {
    if (call.buffers[call.kernel.accesses[s.access].buffer] == buffer) return &s;
  }
  return nullptr;
}

int BufferOf(const ir::TileGraph& tiles, ir::BufferKind kind, int index) {
  for (size_t b = 0; b < tiles.buffers.size(); ++b) {
    if (tiles.buffers[b].kind == kind && tiles.buffers[b].index == index)
      return static_cast<int>(b);
  }
  return -1;
}

std::string CallName(const ir::TileGraph& tiles, int c) {
  return absl::StrCat("call ", c, " (", tiles.calls[c].kernel.name, ")");
}

// Whether output buffer `out` may be written over input buffer `in` (-1: the input is read by
// no kernel); `reason` says why or why not.
bool ProvedInPlace(const ir::TileGraph& tiles, const InPlaceOutput& pair, int out, int in,
                   std::string* reason) {
  std::vector<int> writers;
  for (int c = 0; c < static_cast<int>(tiles.calls.size()); ++c) {
    if (StoreTo(tiles.calls[c], out) != nullptr) writers.push_back(c);
  }
  if (writers.size() != 1) {
    *reason = absl::StrCat(writers.size(), " kernels write output ", pair.output);
    return false;
  }
  const int w = writers[0];
  const ir::KernelCall& writer = tiles.calls[w];
  if (in < 0) {
    *reason = absl::StrCat("no kernel reads input ", pair.input);
    return true;
  }
  for (int c = w + 1; c < static_cast<int>(tiles.calls.size()); ++c) {
    if (Uses(tiles.calls[c], in)) {
      *reason = absl::StrCat(CallName(tiles, c), " reads input ", pair.input, " after ",
                             CallName(tiles, w), " writes output ", pair.output);
      return false;
    }
  }
  if (!Uses(writer, in)) {
    *reason = absl::StrCat("every reader of input ", pair.input, " runs before ",
                           CallName(tiles, w), " writes output ", pair.output);
    return true;
  }
  int slot = -1;
  for (size_t s = 0; s < writer.buffers.size(); ++s) {
    if (writer.buffers[s] == in) slot = static_cast<int>(s);
  }
  if (!KernelMayWriteOver(writer, *StoreTo(writer, out), slot)) {
    *reason = absl::StrCat(CallName(tiles, w), " writes output ", pair.output, " and reads input ",
                           pair.input, " at other elements than it writes");
    return false;
  }
  *reason = absl::StrCat(CallName(tiles, w), " reads input ", pair.input,
                         " only at the elements it writes, and no kernel reads it later");
  return true;
}

// A kernel copying temp `from` into output buffer `to`, both dense over `shape`.
ir::KernelCall CopyCall(const ir::Shape& shape, int from, int to, const device::DeviceInfo& device,
                        const ir::Buffer& out) {
  ir::KernelCall call;
  ir::Kernel& k = call.kernel;
  k.kind = ir::KernelKind::kElementwise;
  k.name = "f32_in_place_copy";
  k.num_buffers = 2;
  k.domain = shape;
  const std::vector<ir::SymExpr> strides = ir::ContiguousStrides(shape);
  k.accesses.push_back({0, ir::SymExpr(0), strides, out.dtype});
  k.accesses.push_back({1, ir::SymExpr(0), strides, out.dtype});
  ir::ExprNode load;
  load.op = ir::ExprOp::kLoad;
  load.access = 0;
  k.output.push_back(load);
  k.stores.push_back({1, 0});
  KernelContext context;
  if (out.elements.IsConstant()) context.output_bytes = out.elements.constant() * 4;
  k.config = DefaultTileConfig(k, context, device);
  call.buffers = {from, to};
  call.work_per_cell = ir::SymExpr(1);
  return call;
}

}  // namespace

absl::Status PlanInPlaceOutputs(const ir::Graph& graph, std::span<const InPlaceOutput> pairs,
                                const device::DeviceInfo& device, ir::TileGraph& tiles) {
  tiles.in_place_outputs.clear();
  const int outputs = static_cast<int>(graph.outputs.size());
  for (const InPlaceOutput& pair : pairs) {
    if (pair.output < 0 || pair.output >= outputs) {
      return absl::InvalidArgumentError(absl::StrCat("in-place output ", pair.output,
                                                     " does not exist (the function has ", outputs,
                                                     outputs == 1 ? " output)" : " outputs)"));
    }
    const ir::DType out_dtype = graph.nodes[graph.outputs[pair.output]].dtype;
    for (const ir::Node& n : graph.nodes) {
      if (n.op != ir::OpKind::kInput || n.attrs.index != pair.input || n.dtype == out_dtype) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "output ", pair.output, " (", std::string(ir::DTypeName(out_dtype)),
          ") cannot be written in place of input ", pair.input, " (",
          std::string(ir::DTypeName(n.dtype)), "): an in-place output needs its input's dtype"));
    }
  }
  for (const InPlaceOutput& pair : pairs) {
    const int out = BufferOf(tiles, ir::BufferKind::kOutput, pair.output);
    const int in = BufferOf(tiles, ir::BufferKind::kInput, pair.input);
    if (out < 0) return absl::InternalError("an output has no buffer in the tile graph");
    ir::InPlaceOutputPlan decision{pair.output, pair.input, false, ""};
    decision.in_place = ProvedInPlace(tiles, pair, out, in, &decision.reason);
    if (!decision.in_place) {
      // The output's buffer becomes a temp, copied into a new output buffer after the last
      // kernel that reads the input or writes the temp.
      int after = -1;
      for (int c = 0; c < static_cast<int>(tiles.calls.size()); ++c) {
        if ((in >= 0 && Uses(tiles.calls[c], in)) || StoreTo(tiles.calls[c], out) != nullptr) {
          after = c;
        }
      }
      ir::Buffer copy = tiles.buffers[out];
      copy.label += " (copied over input " + std::to_string(pair.input) + ")";
      tiles.buffers[out].kind = ir::BufferKind::kTemp;
      tiles.buffers[out].index = 0;
      tiles.buffers.push_back(copy);
      const int to = static_cast<int>(tiles.buffers.size()) - 1;
      const ir::Shape& shape = graph.nodes[graph.outputs[pair.output]].shape;
      tiles.calls.insert(tiles.calls.begin() + after + 1,
                         CopyCall(shape, out, to, device, tiles.buffers[to]));
    }
    tiles.in_place_outputs.push_back(std::move(decision));
  }
  return absl::OkStatus();
}

}  // namespace pto::jit
