#ifndef BENCHLMDB_SHIM_H
#define BENCHLMDB_SHIM_H
#include <lmdb.h>
#endif
