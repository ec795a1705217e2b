// The scene's operations at 1,000, 3,000 and 10,000 elements, timed with the monotonic
// clock: the same scenes and operations as the "Scene of …" benchmarks (Benchmarks/
// MotionBenchmarks/SceneScaleBenchmarks.swift, whose helpers this repeats), as a plain
// program, for machines where package-benchmark's runner prints no results (it printed none
// on the 2-core VM docs/performance.md was measured on, Swift 6.3). Run from the repository
// root, on an otherwise idle machine:
//
//     swift run --package-path Benchmarks -c release SceneScale [10000…]
//
// Each figure is the median of 3 runs (RUNS=1 for one), in milliseconds; add_element and remove_element per
// operation (of 100 in a row), restore and reload for the whole scene; memory is the
// most the resident set grew by one restore, in MiB (measured before the other operations of
// that size, whose freed memory a restore would reuse; give one size per run for a figure
// on a fresh process). ONLY=restore (or add, remove, reload) measures that operation alone,
// for callgrind: `ONLY=restore RUNS=1 valgrind --tool=callgrind …/SceneScale 2000`.
import Foundation
import MotionConfiguration
import MotionCore
import MotionWire
@_spi(Measuring) import MotionDaemon

private func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

private func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Milliseconds `body` takes, the median of `runs`; `body` gets a fresh setup each run.
private func median(runs: Int = Int(ProcessInfo.processInfo.environment["RUNS"] ?? "") ?? 3, _ body: () throws -> Double) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<runs { times.append(try body()) }
    return times.sorted()[runs / 2] * 1000
}

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
func stateFile(count: Int, idLength: Int) -> [UInt8] {
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


let batch = 100
let requested = CommandLine.arguments.dropFirst().compactMap { Int($0) }
let sizes: [(Int, Int)] = requested.isEmpty ? [(1_000, 10), (3_000, 10), (10_000, 10), (10_000, 256)] : requested.map { ($0, 10) }
print("| elements | id bytes | add_element ms | remove_element ms | restore ms | reload ms | resident MiB |")
print("|---:|---:|---:|---:|---:|---:|---:|")
let only = ProcessInfo.processInfo.environment["ONLY"]
/// Whether the operation `name` is measured (all of them unless ONLY names one).
func measures(_ name: String) -> Bool { only == nil || only == name }
for (count, idLength) in sizes {
    var resident = 0
    let restore = !measures("restore") ? .nan : try median {
        let bytes = stateFile(count: count - 1, idLength: idLength)
        // As a start does it: before any client connects.
        let configuration = try Configuration.parse(configurationText, file: "bench.toml")
        let before = residentBytes()
        let start = now()
        let daemon = Daemon(configuration: configuration, clock: ManualFrameClock(now: 10), controlPolicy: { _ in true })
        let state = try SceneState(reading: bytes, limits: ValueLimits(screen: configuration.screen))
        let notes = daemon.restoreScene(state)
        let time = now() - start
        precondition(notes.isEmpty)
        resident = max(resident, residentBytes() - before)
        blackHole(daemon)
        return time
    }
    let add = !measures("add") ? .nan : try median {
        // The configuration's element and count - 1 - batch restored: the adds end at the
        // most a scene may hold.
        let kiosk = try Kiosk(restoring: stateFile(count: count - 1 - batch, idLength: idLength))
        let requests = (0..<batch).map { #""op":"add_element","element":"# + addedElement(elementID(count + $0, length: idLength), count + $0).encoded }
        let start = now()
        for request in requests { kiosk.request(request) }
        let time = now() - start
        precondition(kiosk.elements == count)
        return time / Double(batch)
    }
    let remove = !measures("remove") ? .nan : try median {
        let kiosk = try Kiosk(restoring: stateFile(count: count - 1, idLength: idLength))
        let requests = (0..<batch).map { #""op":"remove_element","element":"# + JSONValue.string(elementID(count / 2 + $0, length: idLength)).encoded }
        let start = now()
        for request in requests { kiosk.request(request) }
        let time = now() - start
        precondition(kiosk.elements == count - batch)
        return time / Double(batch)
    }
    let reload = !measures("reload") ? .nan : try median {
        let kiosk = try Kiosk(restoring: stateFile(count: count - 1, idLength: idLength))
        let start = now()
        kiosk.daemon.reloadCarryingScene(kiosk.configuration)
        let time = now() - start
        precondition(kiosk.elements == count)
        return time
    }
    print("| \(count) | \(idLength) | \(String(format: "%.3f", add)) | \(String(format: "%.3f", remove)) | \(String(format: "%.0f", restore)) | \(String(format: "%.0f", reload)) | \(resident >> 20) |")
}
