#include "jit/codegen/optimize.h"

#include <optional>

#include "device/yield_point.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassInstrumentation.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/OptimizationLevel.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Target/TargetMachine.h"

namespace pto::jit {

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& tm) {
  module.setDataLayout(tm.createDataLayout());
  module.setTargetTriple(tm.getTargetTriple().str());
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions options;
  options.LoopVectorization = true;
  options.SLPVectorization = true;
  llvm::PassInstrumentationCallbacks instrumentation;
  if (device::HasYieldHook()) {
    instrumentation.registerBeforeNonSkippedPassCallback(
        [](llvm::StringRef, llvm::Any) { device::YieldPoint(); });
  }
  llvm::PassBuilder pb(&tm, options, std::nullopt, &instrumentation);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(module, mam);
}

}  // namespace pto::jit
