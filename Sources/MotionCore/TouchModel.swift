/// Touch frames and geometry live in TouchModel, which the input layer (TouchInput) shares
/// without depending on the motion engine; everything that imports MotionCore sees them too.
@_exported import TouchModel
