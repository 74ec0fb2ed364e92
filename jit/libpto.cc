// libpto.so is pto_jit linked whole; this file only anchors the shared library target.
#include "pto/pto.h"
