#include "jit/graph/graph_hash.h"

#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "jit/graph/graph_def.h"
#include "jit/graph/graph_text.h"
#include "tests/jit/graph/test_graphs.h"

namespace pto::graph {
namespace {

using ::pto::graph::testing::MakeBranches;
using ::pto::graph::testing::MakeMlp;
using ::pto::graph::testing::Reorder;

// CanonicalGraphHash(tests/data/golden_mlp.pbtxt), version 1. This value is stored in caches:
// if this test fails, the hash changed, and every persisted cache key with it. Do not update
// it without bumping kGraphHashVersion.
constexpr char kGoldenMlpHash[] = "2adecf01ee4a671e62172459b52e1f55";
const std::string kGoldenMlp = std::string(PTO_SOURCE_DIR) + "/tests/data/golden_mlp.pbtxt";

TEST(GraphHashTest, HexIsHiThenLo) {
  GraphHash h{.hi = 0x0123456789abcdefull, .lo = 0xfedcba9876543210ull};
  EXPECT_EQ(h.Hex(), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(GraphHash{}.Hex(), std::string(32, '0'));
}

TEST(GraphHashTest, GoldenInProcess) {
  absl::StatusOr<ir::Graph> g = LoadGraphFile(kGoldenMlp);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(CanonicalGraphHash(*g).Hex(), kGoldenMlpHash);
  EXPECT_EQ(CanonicalGraphHash(MakeMlp()).Hex(), kGoldenMlpHash);
}

TEST(GraphHashTest, GoldenInSeparateProcess) {
  // Another process: no per-process seed or address may leak into the hash.
  const std::string command = std::string(PTO_GRAPH_HASH_TOOL) + " '" + kGoldenMlp + "'";
  std::FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr) << command;
  std::string out;
  char buf[256];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  EXPECT_EQ(pclose(pipe), 0) << command;
  EXPECT_EQ(out, std::string(kGoldenMlpHash) + "\n");
}

TEST(GraphHashTest, SameAfterGraphDefRoundTrip) {
  for (const ir::Graph& g : {MakeMlp(), MakeBranches()}) {
    absl::StatusOr<ir::Graph> back = FromGraphDef(ToGraphDef(g));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(CanonicalGraphHash(*back), CanonicalGraphHash(g));
  }
}

TEST(GraphHashTest, IgnoresNodeAndSymbolNames) {
  ir::Graph g = MakeBranches();
  ir::Graph renamed = g;
  for (ir::Node& n : renamed.nodes) n.name = "renamed_" + n.name;
  renamed.nodes[2].name.clear();
  renamed.symbols[0].name = "rows";
  renamed.symbols[1].name = "cols";
  EXPECT_EQ(CanonicalGraphHash(renamed), CanonicalGraphHash(g));
}

TEST(GraphHashTest, IgnoresTraceOrderOfIndependentNodes) {
  const ir::Graph mlp = MakeMlp();
  const GraphHash h = CanonicalGraphHash(mlp);
  // Inputs declared in reverse; inputs declared just before their first use.
  EXPECT_EQ(CanonicalGraphHash(Reorder(mlp, {3, 2, 1, 0, 4, 5, 6, 7, 8})), h);
  EXPECT_EQ(CanonicalGraphHash(Reorder(mlp, {1, 0, 4, 2, 5, 6, 3, 7, 8})), h);

  // Branches: nodes a b e two p r t. The tanh branch traced first, the constant early.
  const ir::Graph br = MakeBranches();
  const GraphHash hb = CanonicalGraphHash(br);
  const ir::Graph other = Reorder(br, {1, 6, 3, 0, 2, 4, 5});
  ASSERT_NE(other.ToString(), br.ToString());
  EXPECT_EQ(CanonicalGraphHash(other), hb);
  EXPECT_EQ(CanonicalGraphHash(Reorder(br, {0, 3, 2, 4, 1, 5, 6})), hb);
}

TEST(GraphHashTest, IgnoresSymbolIds) {
  // Branches with its symbols n and m declared in the other order.
  ir::Graph g = MakeBranches();
  ir::Graph swapped = g;
  std::swap(swapped.symbols[0], swapped.symbols[1]);
  std::vector<std::optional<ir::SymExpr>> swap = {ir::SymExpr::Symbol(1), ir::SymExpr::Symbol(0)};
  for (ir::Node& n : swapped.nodes) {
    for (ir::SymExpr& d : n.shape) d = d.Substitute(swap);
  }
  EXPECT_NE(swapped.ToString(), g.ToString() + "x");
  EXPECT_EQ(CanonicalGraphHash(swapped), CanonicalGraphHash(g));
}

TEST(GraphHashTest, IgnoresDeadNodesAndUnusedSymbols) {
  ir::Graph g = MakeMlp();
  const GraphHash h = CanonicalGraphHash(g);
  ir::Node dead;
  dead.op = ir::OpKind::kExp;
  dead.inputs = {0};
  dead.shape = g.nodes[0].shape;
  g.nodes.push_back(dead);
  g.symbols.push_back({"unused", 1, 2});
  EXPECT_EQ(CanonicalGraphHash(g), h);
}

TEST(GraphHashTest, UnusedInputsCount) {
  ir::Graph g = MakeMlp();
  const GraphHash h = CanonicalGraphHash(g);
  g.nodes[8].inputs = {7, 7};  // x is no longer used by any output, but is still an input
  const GraphHash unused_x = CanonicalGraphHash(g);
  EXPECT_NE(unused_x, h);
  g.nodes[0].shape[1] = 769;
  EXPECT_NE(CanonicalGraphHash(g), unused_x);
}

TEST(GraphHashTest, SharingIsHashed) {
  // add(e, e) against add(e, e2) where e2 is a copy of e.
  ir::Graph shared;
  shared.num_inputs = 1;
  shared.nodes.resize(3);
  shared.nodes[0].shape = {4};
  shared.nodes[1].op = ir::OpKind::kExp;
  shared.nodes[1].inputs = {0};
  shared.nodes[1].shape = {4};
  shared.nodes[2].op = ir::OpKind::kAdd;
  shared.nodes[2].inputs = {1, 1};
  shared.nodes[2].shape = {4};
  shared.outputs = {2};
  ir::Graph copied = shared;
  copied.nodes.insert(copied.nodes.begin() + 2, copied.nodes[1]);
  copied.nodes[3].inputs = {1, 2};
  copied.outputs = {3};
  EXPECT_NE(CanonicalGraphHash(shared), CanonicalGraphHash(copied));
}

TEST(GraphHashTest, ChangesWithEverythingElse) {
  // Each mutation of the MLP must change the hash, and all results must differ.
  const std::vector<std::pair<std::string, std::function<void(ir::Graph&)>>> mutations = {
      {"op", [](ir::Graph& g) { g.nodes[6].op = ir::OpKind::kGeluTanh; }},
      {"dtype", [](ir::Graph& g) { g.nodes[6].dtype = ir::DType::kF16; }},
      {"attr index", [](ir::Graph& g) { g.nodes[4].attrs.index = 1; }},
      {"attr scalar", [](ir::Graph& g) { g.nodes[4].attrs.scalar = 1.0; }},
      {"attr scalar -0", [](ir::Graph& g) { g.nodes[4].attrs.scalar = -0.0; }},
      {"attr axis", [](ir::Graph& g) { g.nodes[4].attrs.axis = 1; }},
      {"attr keepdims", [](ir::Graph& g) { g.nodes[4].attrs.keepdims = true; }},
      {"attr transpose_a", [](ir::Graph& g) { g.nodes[4].attrs.transpose_a = true; }},
      {"attr transpose_b", [](ir::Graph& g) { g.nodes[4].attrs.transpose_b = true; }},
      {"attr eps", [](ir::Graph& g) { g.nodes[4].attrs.eps = 1e-6f; }},
      {"attr start", [](ir::Graph& g) { g.nodes[4].attrs.start = 1; }},
      {"attr end", [](ir::Graph& g) { g.nodes[4].attrs.end = 1; }},
      {"attr step", [](ir::Graph& g) { g.nodes[4].attrs.step = 2; }},
      {"attr dtype", [](ir::Graph& g) { g.nodes[4].attrs.dtype = ir::DType::kI8; }},
      {"attr ints", [](ir::Graph& g) { g.nodes[4].attrs.ints = {1}; }},
      {"attr ints longer",
       [](ir::Graph& g) {
         g.nodes[4].attrs.ints = {1, 0};
       }},
      {"static dim", [](ir::Graph& g) { g.nodes[4].shape[1] = 3073; }},
      {"symbolic dim", [](ir::Graph& g) { g.nodes[4].shape[0] = ir::SymExpr::Symbol(0) * 2; }},
      {"rank", [](ir::Graph& g) { g.nodes[4].shape.push_back(1); }},
      {"symbol max", [](ir::Graph& g) { g.symbols[0].max = 4095; }},
      {"symbol min", [](ir::Graph& g) { g.symbols[0].min = 2; }},
      {"input order",
       [](ir::Graph& g) {
         g.nodes[5].inputs = {2, 4};
       }},
      {"input choice",
       [](ir::Graph& g) {
         g.nodes[8].inputs = {7, 7};
       }},
      {"input index",
       [](ir::Graph& g) { std::swap(g.nodes[0].attrs.index, g.nodes[1].attrs.index); }},
      {"num_inputs", [](ir::Graph& g) { g.num_inputs = 5; }},
      {"more outputs", [](ir::Graph& g) { g.outputs.push_back(6); }},
      {"output order",
       [](ir::Graph& g) {
         g.outputs = {6, 8};
       }},
      {"other output", [](ir::Graph& g) { g.outputs = {7}; }},
      {"second symbol",
       [](ir::Graph& g) {
         g.symbols.push_back({"seq", 1, 4096});
         g.nodes[1].shape[0] = ir::SymExpr::Symbol(1);
       }},
      {"shared symbol",
       [](ir::Graph& g) {  // same as above, but sharing batch
         g.nodes[1].shape[0] = ir::SymExpr::Symbol(0);
       }},
  };
  std::set<std::string> seen = {CanonicalGraphHash(MakeMlp()).Hex()};
  for (const auto& [what, mutate] : mutations) {
    ir::Graph g = MakeMlp();
    mutate(g);
    EXPECT_TRUE(seen.insert(CanonicalGraphHash(g).Hex()).second) << what;
  }
  // The two outputs orders differ from each other too (checked by the set above).
  EXPECT_EQ(seen.size(), mutations.size() + 1);
}

}  // namespace
}  // namespace pto::graph
