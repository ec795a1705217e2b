#ifndef MOTIOND_CYAML_SHIM_H
#define MOTIOND_CYAML_SHIM_H
// libyaml's event parser, for the libinput recordings TouchInput reads.
#include <yaml.h>
#endif
