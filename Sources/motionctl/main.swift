import MotionControl

// Everything motionctl does is in MotionControl, which motiond links too: the installed
// motionctl is a link to motiond (see motiond's main).
motionctlMain()
