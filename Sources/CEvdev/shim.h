#ifndef MOTIOND_CEVDEV_SHIM_H
#define MOTIOND_CEVDEV_SHIM_H
// libevdev and the kernel's input event codes, for TouchInput.
#include <libevdev/libevdev.h>
#include <linux/input.h>
#endif
