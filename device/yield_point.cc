#include "device/yield_point.h"

#include <chrono>

namespace pto::device {
namespace {

thread_local const std::function<void()>* tls_hook = nullptr;
thread_local double tls_yielded = 0;

}  // namespace

ScopedYieldHook::ScopedYieldHook(const std::function<void()>* hook) : previous_(tls_hook) {
  tls_hook = hook;
}

ScopedYieldHook::~ScopedYieldHook() { tls_hook = previous_; }

bool HasYieldHook() { return tls_hook != nullptr && *tls_hook; }

void YieldPoint() {
  if (!HasYieldHook()) return;
  const auto start = std::chrono::steady_clock::now();
  (*tls_hook)();
  tls_yielded += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double SecondsYielded() { return tls_yielded; }

}  // namespace pto::device
