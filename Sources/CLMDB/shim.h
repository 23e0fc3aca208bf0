#ifndef CLMDB_SHIM_H
#define CLMDB_SHIM_H
#include <lmdb.h>

/* A hint that `p` is read soon (a scan reads ahead of its fold): no fault, no effect on results. */
static inline void clmdb_prefetch(const void *p) { __builtin_prefetch(p, 0, 3); }
#endif
