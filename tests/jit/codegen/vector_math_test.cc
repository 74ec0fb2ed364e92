// Accuracy of the inline vector math (jit/codegen/vector_math.h) against double-precision std::
// functions, with FMA (host ISA) and without (SSE2), over dense sweeps and special values.
#include "jit/codegen/vector_math.h"

#include <cfloat>
#include <cmath>
#include <functional>
#include <iostream>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "jit/codegen/emit_kernel.h"
#include "kernel_test_util.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace pto::jit::testing {
namespace {

using device::Isa;
using ir::ExprOp;

// erf has no ExprOp (only gelu_erf uses it): a hand-built <4 x float> loop around EmitErf.
std::vector<float> RunErf(Isa isa, const std::vector<float>& x) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto m = std::make_unique<llvm::Module>("vm_erf", *ctx);
  llvm::Type* ptr = llvm::PointerType::getUnqual(*ctx);
  llvm::Type* i64 = llvm::Type::getInt64Ty(*ctx);
  llvm::Type* v4 = llvm::FixedVectorType::get(llvm::Type::getFloatTy(*ctx), 4);
  const std::string name = std::string("vm_erf_") + device::IsaName(isa);
  auto* fn = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getVoidTy(*ctx), {ptr, ptr, i64}, false),
      llvm::Function::ExternalLinkage, name, *m);
  SetCodegenAttributes(EngineFor(isa).target(), 4, *fn);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(*ctx, "entry", fn);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(*ctx, "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(*ctx, "exit", fn);
  llvm::IRBuilder<> b(entry);
  b.CreateBr(loop);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(i64, 2);
  i->addIncoming(b.getInt64(0), entry);
  llvm::Value* in = b.CreateLoad(v4, b.CreateGEP(b.getFloatTy(), fn->getArg(0), i));
  b.CreateStore(EmitErf(b, in), b.CreateGEP(b.getFloatTy(), fn->getArg(1), i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(4));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, fn->getArg(2)), loop, exit);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  absl::StatusOr<CompiledObject> c = EngineFor(isa).Compile(std::move(m), std::move(ctx));
  EXPECT_TRUE(c.ok()) << c.status();
  std::vector<float> in_copy = x;
  in_copy.resize((x.size() + 3) / 4 * 4 + 4, 0.f);
  std::vector<float> out(in_copy.size(), 0.f);
  if (!c.ok()) return out;
  auto f =
      reinterpret_cast<void (*)(const float*, float*, int64_t)>(reinterpret_cast<void*>(c->entry));
  f(in_copy.data(), out.data(), static_cast<int64_t>(x.size()));
  out.resize(x.size());
  return out;
}

// out[i] = op(in[i]) over a symbolic length, unrolled twice.
ir::Kernel UnaryKernel(ExprOp op, const std::string& name) {
  ir::Kernel k;
  k.kind = ir::KernelKind::kElementwise;
  k.name = name;
  k.num_buffers = 2;
  k.domain = {ir::SymExpr::Symbol(0)};
  k.accesses = {MakeAccess(0, {1}), MakeAccess(1, {1})};
  Program p;
  int v = p.Un(op, p.Load(0));
  k.output = p.nodes();
  k.stores = {{1, v}};
  k.config.unroll = 2;
  return k;
}

std::vector<float> RunOp(Isa isa, ExprOp op, const std::vector<float>& x) {
  if (op == ExprOp::kConst) return RunErf(isa, x);  // kConst stands for erf in these tests
  const ir::Kernel k =
      UnaryKernel(op, std::string("vm_") + ir::ExprOpName(op) + "_" + device::IsaName(isa));
  absl::StatusOr<CompiledObject> c = CompileKernel(EngineFor(isa), k);
  EXPECT_TRUE(c.ok()) << c.status();
  std::vector<float> out(x.size(), 0.f);
  if (!c.ok()) return out;
  std::vector<float> in = x;
  const int64_t n = static_cast<int64_t>(x.size());
  RunGrid(c->entry, {in.data(), out.data()}, {n}, 1, n);
  return out;
}

std::vector<float> Sweep(double lo, double hi, double step) {
  std::vector<float> v;
  for (double x = lo; x <= hi; x += step) v.push_back(static_cast<float>(x));
  return v;
}

std::vector<float> Specials() {
  const float inf = std::numeric_limits<float>::infinity();
  return {0.f,      -0.f,   FLT_TRUE_MIN, -FLT_TRUE_MIN, 1e-40f,   -1e-40f, FLT_MIN,
          -FLT_MIN, 1e-30f, -1e-30f,      1e-7f,         -1e-7f,   1.f,     -1.f,
          -100.f,   100.f,  88.7f,        88.8f,         -87.f,    -103.f,  -104.f,
          -110.f,   1e10f,  -1e10f,       FLT_MAX,       -FLT_MAX, inf,     -inf};
}

struct Errors {
  double max_rel = 0;  // where |reference| >= min_rel_magnitude
  double max_abs = 0;
  float worst_x = 0;
};

// Compares against `ref`; specials (NaN, inf, overflow) must match exactly in kind.
Errors Measure(Isa isa, ExprOp op, const std::vector<float>& x,
               const std::function<double(double)>& ref, double min_rel_magnitude) {
  std::vector<float> got = RunOp(isa, op, x);
  Errors e;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = ref(x[i]);
    const float g = got[i];
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(g)) << ir::ExprOpName(op) << "(" << x[i] << ") = " << g;
      continue;
    }
    const double wantf = static_cast<float>(want);  // the f32 result a correct libm gives
    if (std::isinf(wantf)) {
      EXPECT_EQ(g, wantf) << ir::ExprOpName(op) << "(" << x[i] << ")";
      continue;
    }
    EXPECT_FALSE(std::isnan(g) || std::isinf(g))
        << ir::ExprOpName(op) << "(" << x[i] << ") = " << g;
    const double abs_err = std::abs(g - want);
    if (abs_err > e.max_abs) e.max_abs = abs_err;
    if (std::abs(want) >= min_rel_magnitude) {
      const double rel = abs_err / std::abs(want);
      if (rel > e.max_rel) {
        e.max_rel = rel;
        e.worst_x = x[i];
      }
    }
  }
  std::cout << (op == ExprOp::kConst ? "erf" : ir::ExprOpName(op)) << " " << device::IsaName(isa)
            << ": max rel " << e.max_rel << " (x=" << e.worst_x << "), max abs " << e.max_abs
            << "\n";
  return e;
}

std::vector<float> Join(std::vector<float> a, const std::vector<float>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const Isa kIsas[] = {Isa::kAvx512, Isa::kSse2};

TEST(VectorMathTest, Exp) {
  for (Isa isa : kIsas) {
    std::vector<float> x = Join(Sweep(-110, 100, 1e-3), Specials());
    Errors e = Measure(
        isa, ExprOp::kExp, x, [](double v) { return std::exp(v); }, FLT_MIN);
    EXPECT_LE(e.max_rel, 3e-7);
    // Results below FLT_MIN are flushed to 0; the smallest input with a normal result keeps it.
    const float first_normal = static_cast<float>(kExpFlushBelow);
    const std::vector<float> below =
        Join(Sweep(-110, -87.337, 1e-3), {std::nextafter(first_normal, -100.f), -200.f});
    for (float v : RunOp(isa, ExprOp::kExp, below)) EXPECT_EQ(v, 0.f);
    EXPECT_GE(RunOp(isa, ExprOp::kExp, {first_normal})[0], FLT_MIN);
    std::vector<float> nan = RunOp(isa, ExprOp::kExp, {NAN});
    EXPECT_TRUE(std::isnan(nan[0]));
  }
}

TEST(VectorMathTest, Log) {
  for (Isa isa : kIsas) {
    std::vector<float> x;
    for (double v = 1e-45; v < 3.3e38; v *= 1.0003) x.push_back(static_cast<float>(v));
    x = Join(x, Sweep(0.5, 2, 1e-5));
    x = Join(x, Specials());
    x.push_back(NAN);
    Errors e = Measure(
        isa, ExprOp::kLog, x, [](double v) { return std::log(v); }, 0.0);
    EXPECT_LE(e.max_abs, 1e-4);  // |log| up to 103: relative bound below is the real one
    Errors near_one = Measure(
        isa, ExprOp::kLog, Sweep(0.5, 2, 1e-6), [](double v) { return std::log(v); }, 1e30);
    EXPECT_LE(near_one.max_abs, 1e-7);
    Errors far = Measure(
        isa, ExprOp::kLog, Join(Sweep(2, 1000, 1e-2), Sweep(1e-6, 0.5, 1e-6)),
        [](double v) { return std::log(v); }, 0.0);
    EXPECT_LE(far.max_rel, 2.4e-7);
  }
}

TEST(VectorMathTest, TanhSigmoidErf) {
  for (Isa isa : kIsas) {
    std::vector<float> x = Join(Sweep(-20, 20, 1e-4), Specials());
    x.push_back(NAN);
    Errors t = Measure(
        isa, ExprOp::kTanh, x, [](double v) { return std::tanh(v); }, 0.0);
    EXPECT_LE(t.max_abs, 3e-7);
    EXPECT_LE(t.max_rel, 4.8e-7);
    Errors s = Measure(
        isa, ExprOp::kSigmoid, Join(x, Sweep(-110, 110, 1e-3)),
        [](double v) { return 1 / (1 + std::exp(-v)); }, FLT_MIN);
    EXPECT_LE(s.max_rel, 6e-7);
    // Denormal results (|x| < 1.1e-38) carry denormal rounding: relative error from FLT_MIN.
    Errors e = Measure(
        isa, ExprOp::kConst, x, [](double v) { return std::erf(v); }, FLT_MIN);
    EXPECT_LE(e.max_abs, 3e-7);
    EXPECT_LE(e.max_rel, 1e-6);
  }
}

TEST(VectorMathTest, GeluAndSilu) {
  for (Isa isa : kIsas) {
    std::vector<float> x = Join(Sweep(-20, 20, 1e-4), Specials());
    x.push_back(NAN);
    // Composite functions at +-inf give inf*0 in the formula: compare on finite inputs.
    std::vector<float> finite;
    for (float v : x) {
      if (std::isfinite(v)) finite.push_back(v);
    }
    Errors gt = Measure(
        isa, ExprOp::kGeluTanh, finite,
        [](double v) {
          const double u = std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
          return v / (1 + std::exp(-2 * u));  // == 0.5v(1 + tanh(u)), without cancellation
        },
        1e-36);
    // The tail is ill-conditioned (d ln gelu / d ln x ~ 200 at x = -10): 3e-5 there.
    EXPECT_LE(gt.max_rel, 3e-5);
    Errors gt5 = Measure(
        isa, ExprOp::kGeluTanh, Sweep(-5, 20, 1e-4),
        [](double v) {
          const double u = std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v);
          return v / (1 + std::exp(-2 * u));
        },
        0.0);
    EXPECT_LE(gt5.max_rel, 3e-6);
    Errors ge = Measure(
        isa, ExprOp::kGeluErf, finite,
        [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }, 1e-30);
    EXPECT_LE(ge.max_rel, 2e-5);
    EXPECT_LE(ge.max_abs, 1e-6);
    Errors ge5 = Measure(
        isa, ExprOp::kGeluErf, Sweep(-5, 20, 1e-4),
        [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }, 0.0);
    EXPECT_LE(ge5.max_rel, 3e-6);
    // Around 0, where 1 + erf(z) comes from 2 - erfc(z) or erfc(-z) (no erf series).
    Errors ge0 = Measure(
        isa, ExprOp::kGeluErf, Join(Sweep(-0.8, 0.8, 1e-5), {1e-30f, -1e-30f, 1e-20f, -1e-20f}),
        [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); }, 0.0);
    EXPECT_LE(ge0.max_rel, 1e-6);
    // NaN stays NaN; gelu(inf) = inf, and gelu(-inf) is the clamped tail's 2.6e-36 (not inf * 0).
    const std::vector<float> special = RunOp(isa, ExprOp::kGeluErf, {NAN, INFINITY, -INFINITY});
    EXPECT_TRUE(std::isnan(special[0]));
    EXPECT_EQ(special[1], INFINITY);
    EXPECT_LE(std::abs(special[2]), 1e-35f);
    EXPECT_GE(std::abs(special[2]), FLT_MIN);
    Errors si = Measure(
        isa, ExprOp::kSilu, finite, [](double v) { return v / (1 + std::exp(-v)); }, 1e-36);
    EXPECT_LE(si.max_rel, 1e-6);
  }
}

// gelu_erf's derivative Phi(x) + x phi(x): absolute error everywhere (the terms cancel at its
// zero near -0.75), relative error where it is well conditioned.
TEST(VectorMathTest, GeluErfGrad) {
  const auto ref = [](double v) {
    return 0.5 * std::erfc(-v / std::sqrt(2.0)) + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
  };
  for (Isa isa : kIsas) {
    std::vector<float> finite;
    for (float v : Join(Sweep(-20, 20, 1e-4), Specials())) {
      if (std::isfinite(v)) finite.push_back(v);
    }
    Errors all = Measure(isa, ExprOp::kGeluErfGrad, finite, ref, 1e30);
    EXPECT_LE(all.max_abs, 3e-7);
    Errors away = Measure(isa, ExprOp::kGeluErfGrad,
                          Join(Sweep(-3, -1, 1e-5), Sweep(-0.5, 20, 1e-4)), ref, 0.0);
    EXPECT_LE(away.max_rel, 1.5e-6);
    // NaN stays NaN; the derivative is 1 at +inf and a clamped tail of about -1e-34 at -inf.
    const std::vector<float> special = RunOp(isa, ExprOp::kGeluErfGrad, {NAN, INFINITY, -INFINITY});
    EXPECT_TRUE(std::isnan(special[0]));
    EXPECT_EQ(special[1], 1.0f);
    EXPECT_LE(std::abs(special[2]), 1e-33f);
  }
}

// No function returns a subnormal number (they cost a microcode assist per instruction that
// touches them): results below FLT_MIN are 0. (Inputs near FLT_MIN are left out: x/2 there, as
// silu and gelu give, is subnormal exactly.)
TEST(VectorMathTest, NoSubnormalResults) {
  const ExprOp ops[] = {ExprOp::kExp,         ExprOp::kSigmoid,  ExprOp::kSilu,
                        ExprOp::kTanh,        ExprOp::kGeluTanh, ExprOp::kGeluErf,
                        ExprOp::kGeluErfGrad, ExprOp::kConst /* erf */};
  std::vector<float> x = Join(Sweep(-200, 200, 1e-3), Sweep(-90, -85, 1e-5));
  x = Join(x, {std::nextafter(static_cast<float>(kExpFlushBelow), -100.f),
               static_cast<float>(kExpFlushBelow), 1e-30f, -1e-30f, 1e10f, -1e10f});
  for (Isa isa : kIsas) {
    for (ExprOp op : ops) {
      const std::vector<float> got = RunOp(isa, op, x);
      int subnormal = 0;
      float first = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if (std::fpclassify(got[i]) == FP_SUBNORMAL && subnormal++ == 0) first = x[i];
      }
      EXPECT_EQ(subnormal, 0) << (op == ExprOp::kConst ? "erf" : ir::ExprOpName(op)) << " "
                              << device::IsaName(isa) << ": first at x = " << first;
    }
  }
}

// On AVX-512, exp scales by 2^n with vscalefps (one instruction for what takes eight from
// exponent bits: exp was throughput bound); other targets build 2^n from exponent bits.
TEST(VectorMathTest, ExpScalesWithScalefOnAvx512) {
  const ir::Kernel k = UnaryKernel(ExprOp::kExp, "vm_exp_asm");
  const std::string avx2 = KernelAssembly(k, TargetFor(Isa::kAvx2));
  EXPECT_EQ(avx2.find("vscalefps"), std::string::npos);
  EXPECT_NE(avx2.find("vpslld"), std::string::npos);
  if (HostTarget().isa == Isa::kAvx512) {
    const std::string avx512 = KernelAssembly(k, TargetFor(Isa::kAvx512));
    EXPECT_NE(avx512.find("vscalefps\t%zmm"), std::string::npos) << avx512;
    EXPECT_EQ(avx512.find("vpslld"), std::string::npos) << avx512;
  }
}

}  // namespace
}  // namespace pto::jit::testing
