// Counts the memory each thread allocates, for tests that check how much work an operation
// does without timing it (SceneScalingTests): bytes asked for grow with whatever an
// operation builds, and unlike time they do not depend on how busy the machine is.
//
// Defined here, malloc, calloc and realloc replace the C library's in the whole test
// program (an executable's own symbols come first for every library it loads), count, and
// hand over to glibc's own implementation, which free() still pairs with. The counts are
// per thread, so tests running in parallel on other threads do not disturb them; they are
// initial-exec thread-locals, which need no allocation to reach from inside malloc.

#include <stddef.h>
#include "AllocationCounter.h"

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);

static __thread __attribute__((tls_model("initial-exec"))) allocation_count counted;

allocation_count allocation_count_of_this_thread(void) {
    return counted;
}

void *malloc(size_t size) {
    counted.calls += 1;
    counted.bytes += size;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    counted.calls += 1;
    counted.bytes += count * size;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    counted.calls += 1;
    counted.bytes += size;
    return __libc_realloc(pointer, size);
}
