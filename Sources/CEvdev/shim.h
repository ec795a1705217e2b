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
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

// The tracking ids libevdev dropped from a device's events since the reader last took them.
// libevdev drops a slot's new tracking id that comes with no -1 before it, and says so in its
// log as a kernel bug; the kernel's slot protocol reads it as the old contact lifting and a new
// one landing, and so does a replay of the raw events: the reader puts them back.
#define MOTIOND_REPLACED_IDS_MAX 32
struct motiond_replaced_ids {
    int count;
    int values[MOTIOND_REPLACED_IDS_MAX];
};

static inline int motiond_replaced_id(const struct motiond_replaced_ids *ids, int index) {
    return ids->values[index];
}

// A device's log: the dropped ids are noted (libevdev names the device, then the id, then the
// slot, which is the slot its events address then); anything else goes to stderr, as
// libevdev's own log would say it.
static inline void motiond_evdev_log(const struct libevdev *dev, enum libevdev_log_priority priority, void *data,
                              const char *file, int line, const char *func, const char *format, va_list args) {
    (void)dev; (void)priority; (void)file; (void)line;
    if (strstr(format, "received a double tracking ID %d in slot %d") != NULL) {
        struct motiond_replaced_ids *ids = data;
        (void)va_arg(args, const char *);
        int value = va_arg(args, int);
        if (value >= 0 && ids->count < MOTIOND_REPLACED_IDS_MAX) ids->values[ids->count++] = value;
        return;
    }
    fprintf(stderr, "libevdev error in %s: ", func);
    vfprintf(stderr, format, args);
}

// Has libevdev note in `ids` the tracking ids it drops from `dev`'s events.
static inline void motiond_evdev_keep_replaced_ids(struct libevdev *dev, struct motiond_replaced_ids *ids) {
    ids->count = 0;
    libevdev_set_device_log_function(dev, motiond_evdev_log, LIBEVDEV_LOG_ERROR, ids);
}
#endif
