#ifndef CMALLOCINFO_SHIM_H
#define CMALLOCINFO_SHIM_H
// glibc's mallinfo2: bytes the heap holds in use, sampled by the streaming workloads.
#include <malloc.h>
#endif
