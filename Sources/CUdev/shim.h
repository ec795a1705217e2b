#ifndef MOTIOND_CUDEV_SHIM_H
#define MOTIOND_CUDEV_SHIM_H
// libudev: touchscreen discovery and hotplug, for TouchInput.
#include <libudev.h>
#endif
