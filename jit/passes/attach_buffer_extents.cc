#include "jit/passes/attach_buffer_extents.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace pto::jit {
namespace {

std::string BufferName(const ir::Buffer& buffer) {
  switch (buffer.kind) {
    case ir::BufferKind::kInput:
      return absl::StrCat("input ", buffer.index);
    case ir::BufferKind::kOutput:
      return absl::StrCat("output ", buffer.index);
    case ir::BufferKind::kTemp:
      return "intermediate";
    case ir::BufferKind::kPacked:
      return absl::StrCat("packed input ", buffer.index);
  }
  return "buffer";
}

}  // namespace

void AttachBufferExtents(ir::TileGraph& tiles) {
  for (ir::KernelCall& call : tiles.calls) {
    call.kernel.buffer_extents.clear();
    for (int b : call.buffers) {
      const ir::Buffer& buffer = tiles.buffers[b];
      call.kernel.buffer_extents.push_back({buffer.elements, BufferName(buffer)});
    }
  }
}

}  // namespace pto::jit
