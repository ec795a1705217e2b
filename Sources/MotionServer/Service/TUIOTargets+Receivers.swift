import MotionTUIO
import MotionWire
import MotionDaemon

/// TUIO is the daemon's scene output; `stats` shows each target.
extension TUIOTargets: TUIOReceivers {
    public var json: JSONValue {
        .array(statistics.map { target in
            .object([
                ("target", .string(target.target)), ("version", .string(target.version)),
                ("frames", .integer(Int64(target.frames))), ("datagrams", .integer(Int64(target.datagrams))),
                ("failures", .integer(Int64(target.failures))), ("last_error", target.lastError.map { .string($0) } ?? .null),
            ])
        })
    }

    public var counts: [TUIOTargetCounts] {
        sentByTarget.map { TUIOTargetCounts(target: $0.key, datagrams: $0.value.datagrams, failures: $0.value.failures) }
    }
}
