// pto: a JIT runtime for tensor programs on the CPU. See docs/architecture.md.
#ifndef PTO_PTO_H_
#define PTO_PTO_H_

#include "pto/losses.h"
#include "pto/options.h"
#include "pto/runtime.h"
#include "pto/tensor.h"
#include "pto/train.h"
#include "pto/value.h"

#endif  // PTO_PTO_H_
