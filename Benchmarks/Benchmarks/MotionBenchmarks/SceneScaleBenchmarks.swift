import Benchmark
import Foundation
import MotionConfiguration
import MotionCore
import MotionWire
@_spi(Measuring) import MotionDaemon

// How the scene's operations grow with its size: `add_element` and `remove_element` through
// the protocol, a start restoring a kept scene (the state file's bytes read, the elements
// put back), a reload carrying the scene over, and the memory a scene holds. Each at 1,000,
// 3,000 and 10,000 elements (10,000 is the most a scene may have), with ids of 10 bytes,
// and at 10,000 with ids of 256 bytes, the longest an id may be.
//
// Every figure is per operation and should stay flat as the scene grows: a figure that
// grows with it is an operation that walks the whole scene.
//
// The scene is elements a client added, each tossable to a point (so each has a
// destination to restore), with one client subscribed to "*", as the live page is: its
// subscription is matched against every new stream.

/// The configuration: the screen, and one element of its own.
private let configurationText = """
    [screen]
    width = 1920
    height = 1080

    [[element]]
    id = "card"
    center = [960, 540]
    size = [400, 300]
    [element.tossable]
    destination = [960, 540]
    """

/// A client that reads everything at once, so the socket's cost is not measured.
private final class DiscardingOutput: ClientOutput {
    var bytes = 0
    var coalesced: Int { 0 }
    var isKeepingUp: Bool { true }
    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) { bytes += line.count }
    func sendNow(_ lines: ArraySlice<UInt8>) { bytes += lines.count }
    func flush() {}
    func close(saying line: ArraySlice<UInt8>?) {}
}

/// The `index`th element's id, `length` bytes long.
private func elementID(_ index: Int, length: Int) -> String {
    let number = "n\(index)-"
    return number + String(repeating: "x", count: max(0, length - number.utf8.count))
}

/// The `add_element` object of the `index`th element.
private func addedElement(_ id: String, _ index: Int) -> JSONValue {
    let x = Double(100 + (index * 37) % 1700), y = Double(100 + (index * 53) % 900)
    return .object([
        ("center", .array([.number(x), .number(y)])), ("id", .string(id)),
        ("interactions", .object([("tossable", .object([("destination", .array([.number(x), .number(y)]))]))])),
        ("size", .array([50, 40])),
    ])
}

/// A state file's bytes holding `count` added elements, each moved a little from its centre.
private func stateFile(count: Int, idLength: Int) -> [UInt8] {
    SceneState(elements: (0..<count).map { index in
        let id = elementID(index, length: idLength)
        let x = Double(100 + (index * 37) % 1700), y = Double(100 + (index * 53) % 900)
        return SceneState.Element(id: id, added: addedElement(id, index), position: Point(x: x + 5, y: y + 5), destination: Point(x: x, y: y))
    }).encoded
}

/// A daemon with the scene `bytes` hold restored, and a client subscribed to every stream.
private final class Kiosk {
    let configuration: Configuration
    let daemon: Daemon
    let output = DiscardingOutput()
    let session: ClientSession
    private var nextID = 1

    init(restoring bytes: [UInt8]) throws {
        configuration = try Configuration.parse(configurationText, file: "bench.toml")
        daemon = Daemon(configuration: configuration, clock: ManualFrameClock(now: 10), controlPolicy: { _ in true })
        let state = try SceneState(reading: bytes, limits: ValueLimits(screen: configuration.screen))
        let notes = daemon.restoreScene(state)
        precondition(notes.isEmpty, "the benchmark's scene was not restored whole: \(notes)")
        session = daemon.connect(output, credentials: nil)
        request(#""op":"subscribe","streams":["*"]"#)
    }

    /// Sends a request (its members after the id) and answers it.
    func request(_ members: String) {
        daemon.receive("{\"id\":\(nextID),\(members)}", from: session)
        nextID += 1
    }

    var elements: Int { daemon.engine.scene.elements.count }
}

/// The process's resident memory in bytes (`/proc/self/statm`).
private func residentBytes() -> Int {
    let fields = (try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8))?.split(separator: " ") ?? []
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

func sceneScaleBenchmarks() {
    /// Operations measured in each `add_element` and `remove_element` run: the scene is
    /// that many elements short of its size before the adds, and at its size before the removes.
    let batch = 100
    let sizes = [(1_000, 10), (3_000, 10), (10_000, 10), (10_000, 256)]
    let slow = Benchmark.Configuration(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 5)

    for (count, idLength) in sizes {
        let name = "\(count) elements, ids of \(idLength) bytes"

        Benchmark("Scene of \(name): add_element, each of \(batch)", configuration: slow) { benchmark in
            // The configuration's element and count - 1 - batch restored: the adds end at the
            // most a scene may hold.
            let kiosk = try Kiosk(restoring: stateFile(count: count - 1 - batch, idLength: idLength))
            let requests = (0..<batch).map { index in
                let id = elementID(count + index, length: idLength)
                return #""op":"add_element","element":"# + addedElement(id, count + index).encoded
            }
            benchmark.startMeasurement()
            for request in requests { kiosk.request(request) }
            benchmark.stopMeasurement()
            precondition(kiosk.elements == count, "the adds did not all succeed")
        }

        Benchmark("Scene of \(name): remove_element, each of \(batch)", configuration: slow) { benchmark in
            let kiosk = try Kiosk(restoring: stateFile(count: count - 1, idLength: idLength))
            let requests = (0..<batch).map { index in
                // From the middle of the scene, where a removal shifts half of it.
                #""op":"remove_element","element":"# + JSONValue.string(elementID(count / 2 + index, length: idLength)).encoded
            }
            benchmark.startMeasurement()
            for request in requests { kiosk.request(request) }
            benchmark.stopMeasurement()
            precondition(kiosk.elements == count - batch, "the removes did not all succeed")
        }

        Benchmark("Scene of \(name): restore from the state file's bytes", configuration: slow) { benchmark in
            let bytes = stateFile(count: count - 1, idLength: idLength)
            benchmark.startMeasurement()
            let kiosk = try Kiosk(restoring: bytes)
            benchmark.stopMeasurement()
            blackHole(kiosk)
        }

        Benchmark("Scene of \(name): reload carrying the scene over", configuration: slow) { benchmark in
            let kiosk = try Kiosk(restoring: stateFile(count: count - 1, idLength: idLength))
            benchmark.startMeasurement()
            kiosk.daemon.reloadCarryingScene(kiosk.configuration)
            benchmark.stopMeasurement()
            precondition(kiosk.elements == count, "the reload lost elements")
        }

        // The memory the scene holds: how much the process's resident memory grew by
        // restoring it (what a daemon holding it keeps, and what the restore needed on the
        // way), in KiB. Run alone (--filter), so that no benchmark before it left memory free.
        Benchmark("Scene of \(name): memory held, KiB",
                  configuration: .init(metrics: [.custom("KiB resident", polarity: .prefersSmaller, useScalingFactor: false)], scalingFactor: .one, maxIterations: 1)) { benchmark in
            let bytes = stateFile(count: count - 1, idLength: idLength)
            let before = residentBytes()
            let kiosk = try Kiosk(restoring: bytes)
            benchmark.measurement(.custom("KiB resident", polarity: .prefersSmaller, useScalingFactor: false), (residentBytes() - before) / 1024)
            blackHole(kiosk)
        }
    }
}
