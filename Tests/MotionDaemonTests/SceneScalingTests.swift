import AllocationCounter
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
import MotionWire
@_spi(Measuring) @testable import MotionDaemon


/// A scene of thousands of elements: its operations cost what they must and no more (one
/// `add_element` or `remove_element` the same whatever the scene holds; a restore or a reload
/// in proportion to it), its hello stays a line any client reads, and `list` gives a part of
/// its streams by pattern.
///
/// How work grows is checked by the memory each operation allocates, counted on the test's
/// own thread (Tests/AllocationCounter), never by timing: a busy machine does not change
/// it. What the operations cost in time is for the benchmarks (Benchmarks/, "Scene of …").
@Suite("Large scenes")
struct SceneScalingTests {
    static let configuration = """
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

    /// The `add_element` object of element `index`: tossable, so that it has a destination.
    static func element(_ index: Int, idLength: Int = 8) -> JSONValue {
        let x = Double(100 + (index * 37) % 1700), y = Double(100 + (index * 53) % 900)
        return .object([
            ("center", .array([.number(x), .number(y)])), ("id", .string(id(index, length: idLength))),
            ("interactions", .object([("tossable", .object([("destination", .array([.number(x), .number(y)]))]))])),
            ("size", .array([50, 40])),
        ])
    }

    static func id(_ index: Int, length: Int = 8) -> String {
        let number = "n\(index)-"
        return number + String(repeating: "x", count: max(0, length - number.utf8.count))
    }

    /// A kept scene of `count` added elements, each moved a little from its centre.
    static func state(count: Int, idLength: Int = 8) -> SceneState {
        SceneState(elements: (0..<count).map { index in
            let x = Double(100 + (index * 37) % 1700), y = Double(100 + (index * 53) % 900)
            return SceneState.Element(id: id(index, length: idLength), added: element(index, idLength: idLength),
                                      position: Point(x: x + 5, y: y + 5), destination: Point(x: x, y: y))
        })
    }

    /// A daemon holding a restored scene of `count` added elements, and a client with
    /// control subscribed to every stream, as the live page is.
    final class Kiosk {
        let daemon: Daemon
        let output = RecordingOutput()
        let session: ClientSession
        private var nextID = 1

        init(elements count: Int, idLength: Int = 8, subscribed: Bool = true) throws {
            daemon = Daemon(configuration: try Configuration.parse(SceneScalingTests.configuration, file: "kiosk.toml"),
                            clock: ManualFrameClock(now: 10), controlPolicy: { _ in true })
            let notes = daemon.restoreScene(SceneScalingTests.state(count: count, idLength: idLength))
            #expect(notes.isEmpty)
            session = daemon.connect(output, credentials: nil)
            if subscribed { try request(#""op":"subscribe","streams":["*"]"#) }
        }

        /// The reply to a request (its members after the id), which must succeed.
        @discardableResult
        func request(_ members: String) throws -> JSONInput {
            let id = nextID
            nextID += 1
            daemon.receive("{\"id\":\(id),\(members)}", from: session)
            let reply = try #require(try output.take().first { $0["id"]?.integer == id })
            try #require(reply["ok"]?.bool == true, "\(members): \(reply)")
            return reply["result"] ?? .null
        }

        /// The error code of a request that must fail.
        func failure(_ members: String) throws -> String? {
            let id = nextID
            nextID += 1
            daemon.receive("{\"id\":\(id),\(members)}", from: session)
            let reply = try #require(try output.take().first { $0["id"]?.integer == id })
            return reply["error"]?["code"]?.string
        }

        func add(_ index: Int) throws {
            try request(#""op":"add_element","element":"# + SceneScalingTests.element(index).encoded)
        }

        func remove(_ index: Int) throws {
            try request(#""op":"remove_element","element":"# + JSONValue.string(SceneScalingTests.id(index)).encoded)
        }
    }

    /// The bytes `body` allocates on this thread.
    static func bytesAllocated(_ body: () throws -> Void) rethrows -> Int {
        let before = allocation_count_of_this_thread()
        try body()
        return Int(allocation_count_of_this_thread().bytes - before.bytes)
    }

    // MARK: How work grows

    /// The scenes compared: four times apart, small enough for a debug build.
    static let small = 250, large = 1_000

    @Test("add_element allocates no more in a scene four times as large, and remove_element at most in proportion (it finds the element's place in the ordered scene)")
    func addAndRemoveStayFlat() throws {
        func perOperation(scene count: Int) throws -> (add: Int, remove: Int) {
            let kiosk = try Kiosk(elements: count)
            // The first of each warms what is made once (buffers that then stay).
            try kiosk.add(count)
            try kiosk.remove(count)
            let add = try Self.bytesAllocated { for index in count + 1...count + 10 { try kiosk.add(index) } }
            let remove = try Self.bytesAllocated { for index in count + 1...count + 10 { try kiosk.remove(index) } }
            return (add / 10, remove / 10)
        }
        let small = try perOperation(scene: Self.small), large = try perOperation(scene: Self.large)
        // Flat, with room for a dictionary or a buffer that happens to grow in one of them.
        #expect(Double(large.add) < Double(small.add) * 1.5 + 4096, "add_element: \(small.add) bytes at \(Self.small) elements, \(large.add) at \(Self.large)")
        // A debug build allocates as it walks an array of elements, so the walk that finds
        // where the element was shows here; a copy of the scene per removal would too.
        let ratio = Double(Self.large) / Double(Self.small)
        #expect(Double(large.remove) < Double(small.remove) * ratio, "remove_element: \(small.remove) bytes at \(Self.small) elements, \(large.remove) at \(Self.large)")
    }

    @Test("restoring and reloading a scene four times as large allocate at most about four times as much")
    func restoreAndReloadGrowLinearly() throws {
        func work(scene count: Int) throws -> (restore: Int, reload: Int) {
            let state = Self.state(count: count)
            let configuration = try Configuration.parse(Self.configuration, file: "kiosk.toml")
            var daemon: Daemon?
            let restore = Self.bytesAllocated {
                daemon = Daemon(configuration: configuration, clock: ManualFrameClock(now: 10), controlPolicy: { _ in true })
                _ = daemon!.restoreScene(state)
            }
            let reload = Self.bytesAllocated { daemon!.reloadCarryingScene(configuration) }
            #expect(daemon!.engine.scene.elements.count == count + 1)
            return (restore, reload)
        }
        let small = try work(scene: Self.small), large = try work(scene: Self.large)
        let ratio = Double(Self.large) / Double(Self.small)
        // Linear work grows by the ratio (4); quadratic work by its square (16).
        #expect(Double(large.restore) < Double(small.restore) * ratio * 1.5, "restore: \(small.restore) bytes at \(Self.small) elements, \(large.restore) at \(Self.large)")
        #expect(Double(large.reload) < Double(small.reload) * ratio * 1.5, "reload: \(small.reload) bytes at \(Self.small) elements, \(large.reload) at \(Self.large)")
    }

    // MARK: Order

    @Test("values changed together are published in the order their elements were added, though a later element reuses an earlier one's stream numbers")
    func publicationOrderSurvivesReusedNumbers() throws {
        let kiosk = try Kiosk(elements: 3)
        try kiosk.remove(0)
        try kiosk.add(3)  // takes the numbers n0-xxxx's streams had
        let engine = kiosk.daemon.engine
        #expect(engine.catalog.id(named: "n3-xxxxx.position")! < engine.catalog.id(named: "n1-xxxxx.position")!, "the numbers are reused")
        _ = try kiosk.output.take()
        // Changed in the reverse of the scene's order, published in one frame.
        for id in ["n3-xxxxx", "n2-xxxxx", "n1-xxxxx", "card"] {
            _ = engine.property("\(id).rotation")!.write!(.number(0.5))
        }
        kiosk.daemon.publishPending()
        let streams = try kiosk.output.take().compactMap { $0["stream"]?.string }
        #expect(streams == ["card.rotation", "n1-xxxxx.rotation", "n2-xxxxx.rotation", "n3-xxxxx.rotation"])
    }

    // MARK: The hello and list

    @Test("the hello of a scene of 10,000 elements with the longest ids names its first 128 streams, counts them all, and stays a short line")
    func helloStaysSmall() throws {
        let kiosk = try Kiosk(elements: 9_999, idLength: ElementSettings.maximumIDBytes, subscribed: false)
        #expect(kiosk.daemon.engine.scene.elements.count == SceneState.maximumElements)
        let output = RecordingOutput()
        _ = kiosk.daemon.connect(output, credentials: nil)
        let line = try #require(output.lines.first)
        #expect(line.utf8.count < 64 << 10, "the hello is \(line.utf8.count) bytes")
        let hello = try JSONInput(parsing: Substring(line.dropLast()))
        // What `list` lists (read from the scene: its reply would be tens of megabytes).
        let all = kiosk.daemon.scene.allStreams.map(\.name)
        #expect(hello["stream_count"]?.integer == all.count)
        #expect(all.count > 100_000)
        #expect(hello["streams"]?.array?.compactMap(\.string) == Array(all.prefix(128)))
    }

    @Test("a small scene's hello names every stream, in list's order, as it always did")
    func smallHelloIsWhole() throws {
        let kiosk = try Kiosk(elements: 2)
        let output = RecordingOutput()
        _ = kiosk.daemon.connect(output, credentials: nil)
        let hello = try #require(try output.take().first)
        let all = try kiosk.request(#""op":"list""#)["streams"]?.array?.compactMap { $0["stream"]?.string } ?? []
        #expect(all.count < 128)
        #expect(hello["streams"]?.array?.compactMap(\.string) == all)
        #expect(hello["stream_count"]?.integer == all.count)
    }

    @Test("list with patterns gives the streams matching any of them, each once, in the scene's order")
    func listByPattern() throws {
        let kiosk = try Kiosk(elements: 300)
        let listed = try kiosk.request(#""op":"list","streams":["n12-xxxx.*","*.drag","n12-xxxx.position"]"#)["streams"]?.array ?? []
        let names = listed.compactMap { $0["stream"]?.string }
        let all = try kiosk.request(#""op":"list""#)["streams"]?.array?.compactMap { $0["stream"]?.string } ?? []
        #expect(names == all.filter { $0.hasPrefix("n12-xxxx.") || $0.hasSuffix(".drag") })
        #expect(names.contains("n12-xxxx.position") && names.contains("n12-xxxx.destination") && names.contains("card.drag"))
        #expect(!names.contains("n120-xxx.position"))
        #expect(listed.first { $0["stream"]?.string == "n12-xxxx.destination" }?["writable"]?.bool == true)
        #expect(listed.first { $0["stream"]?.string == "card.drag" }?["kind"]?.string == "gesture")
    }

    @Test("list's patterns follow subscribe's rules: one matching nothing, too many, too long, none at all, or not strings, are refused")
    func listPatternLimits() throws {
        let kiosk = try Kiosk(elements: 2)
        #expect(try kiosk.failure(#""op":"list","streams":["card.*","nothing.*"]"#) == "unknown_stream")
        let many = (0...SubscriptionLimits.patternsPerRequest).map { "\"p\($0)\"" }.joined(separator: ",")
        #expect(try kiosk.failure(#""op":"list","streams":[\#(many)]"#) == "bad_request")
        let long = String(repeating: "*", count: SubscriptionLimits.patternLength + 1)
        #expect(try kiosk.failure(#""op":"list","streams":["\#(long)"]"#) == "bad_request")
        #expect(try kiosk.failure(#""op":"list","streams":[]"#) == "bad_request")
        #expect(try kiosk.failure(#""op":"list","streams":"card.*""#) == "bad_request")
        #expect(try kiosk.failure(#""op":"list","streams":[1]"#) == "bad_request")
    }
}
