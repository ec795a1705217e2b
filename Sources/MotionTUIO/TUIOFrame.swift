/// What one TUIO frame says to one target: the profiles it carries, each with the session ids
/// alive and the items that changed. Values are as TUIO defines them: positions normalised to
/// 0…1 over the screen (x by its width, y by its height, from the top left), velocities in
/// those units per second, angles in radians from 0 to 2π, rotation speeds in turns per
/// second, accelerations per second.
struct TUIOFrame {
    /// The frame's number (`fseq` in 1.1, `f_id` in 2.0); increasing.
    var number: Int32
    /// The contacts (`/tuio/2Dcur`, `/tuio2/ptr`); nil when the target does not take them.
    var cursors: TUIOProfile<TUIOCursor>?
    /// The elements (`/tuio/2Dobj`, `/tuio2/tok`); nil when the target takes none.
    var objects: TUIOProfile<TUIOObject>?
}

/// One profile's part of a frame.
struct TUIOProfile<Item> {
    /// Every session alive, in the order they began.
    var alive: [Int32] = []
    /// The sessions whose values changed in this frame (or all, in a full frame).
    var changed: [Item] = []
}

/// A contact.
struct TUIOCursor: Equatable {
    var session: Int32
    /// The contact's slot on its device (TUIO 2.0's component id).
    var component: Int32
    var x: Float
    var y: Float
    var velocityX: Float = 0
    var velocityY: Float = 0
    /// How fast the speed changes.
    var acceleration: Float = 0
}

/// An element, sent as a tangible object.
struct TUIOObject: Equatable {
    var session: Int32
    /// The element's class id: its place among the elements, from 0.
    var classID: Int32
    var x: Float
    var y: Float
    var angle: Float
    var velocityX: Float = 0
    var velocityY: Float = 0
    /// Turns per second.
    var rotationSpeed: Float = 0
    var acceleration: Float = 0
    var rotationAcceleration: Float = 0
}

/// How a tracked thing moves, from its successive positions: the velocity and acceleration
/// values TUIO sends, computed as the TUIO reference implementation does (the change since
/// the previous position over the time between them).
struct TUIOMotion {
    private(set) var x = 0.0, y = 0.0
    private(set) var angle = 0.0
    private(set) var velocityX = 0.0, velocityY = 0.0
    private(set) var acceleration = 0.0
    private(set) var rotationSpeed = 0.0
    private(set) var rotationAcceleration = 0.0
    private var time: Double
    private var speed = 0.0

    /// Starts at rest.
    init(x: Double, y: Double, angle: Double = 0, time: Double) {
        self.x = x
        self.y = y
        self.angle = Self.normalised(angle)
        self.time = time
    }

    /// Moves to a new place at `time`. At the same time as before (two changes in one frame)
    /// the velocities stay as they were.
    mutating func move(x: Double, y: Double, angle: Double = 0, time: Double) {
        let angle = Self.normalised(angle)
        let dt = time - self.time
        if dt > 0 {
            velocityX = (x - self.x) / dt
            velocityY = (y - self.y) / dt
            let newSpeed = (velocityX * velocityX + velocityY * velocityY).squareRoot()
            acceleration = (newSpeed - speed) / dt
            speed = newSpeed
            var turn = angle - self.angle
            if turn > .pi { turn -= 2 * .pi } else if turn < -.pi { turn += 2 * .pi }
            let newRotationSpeed = turn / (2 * .pi) / dt
            rotationAcceleration = (newRotationSpeed - rotationSpeed) / dt
            rotationSpeed = newRotationSpeed
            self.time = time
        }
        self.x = x
        self.y = y
        self.angle = angle
    }

    /// An angle in radians as TUIO gives it: from 0 up to 2π.
    static func normalised(_ angle: Double) -> Double {
        guard angle.isFinite else { return 0 }
        let turned = angle.truncatingRemainder(dividingBy: 2 * .pi)
        let positive = turned < 0 ? turned + 2 * .pi : turned
        return positive < 2 * .pi ? positive : 0  // -1e-17 + 2π rounds to 2π
    }
}
