#ifndef ALLOCATION_COUNTER_H
#define ALLOCATION_COUNTER_H

#include <stdint.h>

/// What this thread allocated (malloc, calloc, realloc) since it started: calls, and bytes
/// asked for. Frees are not counted.
typedef struct {
    uint64_t calls;
    uint64_t bytes;
} allocation_count;

/// This thread's count so far; a test takes the difference around what it measures.
allocation_count allocation_count_of_this_thread(void);

#endif
