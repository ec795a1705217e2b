#ifndef MOTIOND_CEVDEV_SHIM_H
#define MOTIOND_CEVDEV_SHIM_H
// libevdev and the kernel's input event codes, for TouchInput.
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>
#include <linux/uinput.h>
#include <sys/ioctl.h>
#include <linux/input.h>
#include <fcntl.h>
#include <errno.h>
#include <time.h>

// Swift does not import errno or function-like macros; these wrap what TouchInput needs.
static inline int motiond_errno(void) { return errno; }
// uinput's protocol version (UI_GET_VERSION, an ioctl macro), or -errno.
static inline int motiond_uinput_version(int fd) {
    unsigned int version = 0;
    return ioctl(fd, UI_GET_VERSION, &version) < 0 ? -errno : (int)version;
}
// Gives the uinput device about to be made its phys (UI_SET_PHYS, an ioctl macro): libevdev's
// uinput creation sends the name and ids but not the phys. 0, or -errno.
static inline int motiond_uinput_set_phys(int fd, const char *phys) {
    return ioctl(fd, UI_SET_PHYS, phys) < 0 ? -errno : 0;
}

#endif
