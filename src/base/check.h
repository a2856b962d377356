// A broken internal invariant crashes loudly. Untrusted input never reaches
// these: it gets an Error instead.
#pragma once

#include <cstdio>
#include <cstdlib>

#define AIRLOCK_CHECK(cond)                                                 \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "airlock: invariant broken at %s:%d: %s\n",      \
                   __FILE__, __LINE__, #cond);                              \
      std::abort();                                                         \
    }                                                                       \
  } while (0)
