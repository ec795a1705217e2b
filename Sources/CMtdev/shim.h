#ifndef MOTIOND_CMTDEV_SHIM_H
#define MOTIOND_CMTDEV_SHIM_H
// libmtdev, which turns multitouch protocol A (contacts separated by SYN_MT_REPORT, no
// slots) into protocol B, for TouchInput. The plumbing API converts events handed to it,
// so live devices and recordings go through the same code.
#include <mtdev-plumbing.h>
#endif
