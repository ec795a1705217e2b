#ifndef MOTIOND_CEVDEV_SHIM_H
#define MOTIOND_CEVDEV_SHIM_H
// libevdev and the kernel's input event codes, for TouchInput.
#include <libevdev/libevdev.h>
#include <linux/input.h>
#include <fcntl.h>
#include <errno.h>
#include <time.h>

// Swift does not import errno or function-like macros; these wrap what TouchInput needs.
static inline int motiond_errno(void) { return errno; }
#endif
