// Which sanitizer this translation unit is built with. GCC defines __SANITIZE_ADDRESS__ and
// __SANITIZE_THREAD__; clang 14 defines neither and answers __has_feature instead, so code
// that must know tests both through these macros (1 or 0).
#ifndef PTO_DEVICE_SANITIZERS_H_
#define PTO_DEVICE_SANITIZERS_H_

#if defined(__has_feature)
#define PTO_HAS_FEATURE_(x) __has_feature(x)
#else
#define PTO_HAS_FEATURE_(x) 0
#endif

#if defined(__SANITIZE_ADDRESS__) || PTO_HAS_FEATURE_(address_sanitizer)
#define PTO_UNDER_ASAN 1
#else
#define PTO_UNDER_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__) || PTO_HAS_FEATURE_(thread_sanitizer)
#define PTO_UNDER_TSAN 1
#else
#define PTO_UNDER_TSAN 0
#endif

#if PTO_HAS_FEATURE_(memory_sanitizer)
#define PTO_UNDER_MSAN 1
#else
#define PTO_UNDER_MSAN 0
#endif

#endif  // PTO_DEVICE_SANITIZERS_H_
