// TouchInput: devices, discovery, hotplug, evemu recordings and coordinate mapping.
// Built in issue 3; the module exists now so that the layering is fixed from the start.
import CEvdev
import CUdev
import MotionCore
