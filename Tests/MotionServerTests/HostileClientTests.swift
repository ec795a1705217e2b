import Foundation
import Glibc
import MotionCore
import NIOCore
import NIOPosix
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionServer
import MotionWire
@testable import MotionDaemon

/// Clients that try to stall, exhaust or confuse the daemon, driven without sockets.
@Suite("Hostile clients")
struct HostileClientTests {
    /// A watcher receiving the marker's values while `hostile` lines are handled between
    /// frames: every line is answered within `bound` seconds, and the watcher sees every
    /// `seq`, none skipped.
    private func answeredWhileOthersReceive(_ hostile: [String], bound: Double = 2) throws -> [JSONInput] {
        let (daemon, clock) = try makeDaemon()
        let watcher = RecordingOutput()
        let watching = daemon.connect(watcher, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["marker.position"]}"#, from: watching)
        daemon.receive(#"{"id": 2, "op": "set", "stream": "marker.destination", "value": {"x": 100, "y": 200}}"#, from: watching)
        _ = try watcher.take()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        var replies: [JSONInput] = []
        var seqs: [Int] = []
        for (index, line) in hostile.enumerated() {
            let start = ProcessInfo.processInfo.systemUptime
            daemon.receive(Substring(line), from: session)
            let elapsed = ProcessInfo.processInfo.systemUptime - start
            #expect(elapsed < bound, "line \(index) took \(elapsed) s")
            let reply = try #require(try output.take().first { $0["id"] != nil })
            replies.append(reply)
            clock.tick(at: 100 + Double(index + 1) / 60)
            seqs += try watcher.take().filter { $0["stream"]?.string == "marker.position" }.compactMap { $0["seq"]?.integer }
        }
        #expect(seqs.count == hostile.count, "the watcher got a value every frame")
        #expect(zip(seqs.dropFirst(), seqs).allSatisfy { $0 == $1 + 1 }, "the watcher missed values: \(seqs)")
        return replies
    }

    @Test("stars then an impossible character are answered at once")
    func starsThenImpossible() throws {
        let lines = [12, 30, 100].map { #"{"id": \#($0), "op": "subscribe", "streams": [""# + String(repeating: "*", count: $0) + #"#"]}"# }
        let replies = try answeredWhileOthersReceive(lines)
        #expect(replies.allSatisfy { $0["error"]?["code"]?.string == "unknown_stream" }, "\(replies)")
    }

    @Test("the longest allowed patterns, built to backtrack, cost little even 64 at a time")
    func worstAllowedPatterns() throws {
        let pattern = String(repeating: "*?", count: SubscriptionLimits.patternLength / 2 - 1) + "#"
        let patterns = (0..<SubscriptionLimits.patternsPerRequest).map { #""\#(pattern.dropLast($0 % 3))""# }
        let replies = try answeredWhileOthersReceive([#"{"id": 1, "op": "subscribe", "streams": [\#(patterns.joined(separator: ", "))]}"#,
                                                      #"{"id": 2, "op": "unsubscribe", "streams": [\#(patterns.joined(separator: ", "))]}"#])
        #expect(replies.allSatisfy { $0["ok"]?.bool == false })
    }

    @Test("60 000 stars, 10 000 patterns and an endless stream of new patterns are refused with bad_request naming the limit")
    func limits() throws {
        let stars = #"{"id": 1, "op": "subscribe", "streams": [""# + String(repeating: "*", count: 60_000) + #""]}"#
        let many = #"{"id": 2, "op": "subscribe", "streams": ["# + (0..<10_000).map { #""card.\#($0)""# }.joined(separator: ", ") + "]}"
        let manyOff = #"{"id": 3, "op": "unsubscribe", "streams": ["# + (0..<10_000).map { #""c\#($0)""# }.joined(separator: ", ") + "]}"
        let replies = try answeredWhileOthersReceive([stars, many, manyOff])
        #expect(replies.allSatisfy { $0["error"]?["code"]?.string == "bad_request" }, "\(replies)")
        #expect(replies[0]["error"]?["message"]?.string?.contains("at most 128") == true)
        #expect(replies[1]["error"]?["message"]?.string?.contains("at most 64") == true)
        #expect(replies[2]["error"]?["message"]?.string?.contains("at most 64") == true)

        // Patterns that each match, 64 per request, until the client holds its limit; the next request is refused and changes nothing.
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        for request in 0..<SubscriptionLimits.patternsPerSession / 64 {
            // Distinct patterns that all match: stars, a dot, stars.
            let patterns = (0..<64).map { index in
                let i = request * 64 + index
                return #""\#(String(repeating: "*", count: i / 16 + 1)).\#(String(repeating: "*", count: i % 16 + 1))""#
            }
            daemon.receive(Substring(#"{"id": \#(request), "op": "subscribe", "streams": [\#(patterns.joined(separator: ", "))]}"#), from: session)
            #expect(try output.take().first?["ok"]?.bool == true)
        }
        #expect(session.patterns.count == SubscriptionLimits.patternsPerSession)
        daemon.receive(#"{"id": 99, "op": "subscribe", "streams": ["card.position"]}"#, from: session)
        let refused = try #require(try output.take().first)
        #expect(refused["error"]?["code"]?.string == "bad_request")
        #expect(refused["error"]?["message"]?.string?.contains("at most 256 patterns") == true)
        #expect(session.patterns.count == SubscriptionLimits.patternsPerSession)
        // Unsubscribing a held pattern frees room.
        daemon.receive(#"{"id": 100, "op": "unsubscribe", "streams": ["*.*"]}"#, from: session)
        daemon.receive(#"{"id": 101, "op": "subscribe", "streams": ["card.position"]}"#, from: session)
        #expect(try output.take().compactMap { $0["ok"]?.bool } == [true, true])
    }

    @Test("removed elements leave no seq counts or subscriptions behind")
    func removedStreamsAreForgotten() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        daemon.receive(#"{"id": 1, "op": "subscribe", "streams": ["*.position"]}"#, from: session)
        let subscribed = session.streams.count
        for round in 0..<50 {
            daemon.receive(Substring(#"{"id": 2, "op": "add_element", "element": {"id": "note\#(round)", "center": [300, 200], "size": [20, 20]}}"#), from: session)
            daemon.receive(Substring(#"{"id": 3, "op": "set", "stream": "note\#(round).position", "value": {"x": 5, "y": 6}}"#), from: session)
            daemon.receive(Substring(#"{"id": 4, "op": "remove_element", "element": "note\#(round)"}"#), from: session)
        }
        #expect(try output.take().filter { $0["ok"]?.bool == false }.isEmpty)
        #expect(session.streams.count == subscribed, "subscriptions of removed streams are dropped")
        #expect(daemon.countedStreams <= Set(daemon.engine.streams.map(\.stream)).count, "seq counts of removed streams are dropped")
        // An element added again under the same id counts its values from the start.
        daemon.receive(#"{"id": 5, "op": "add_element", "element": {"id": "note0", "center": [300, 200], "size": [20, 20]}}"#, from: session)
        daemon.receive(#"{"id": 6, "op": "get", "stream": "note0.position"}"#, from: session)
        #expect(try output.take().last?["result"]?["seq"]?.integer == 0)
    }
}

/// The pending-output bound, on a real socket the peer never reads.
@Suite("Element ids from clients")
struct ElementIDTests {
    @Test("an id with a NUL is refused, not cut short into another element that cannot be removed (found by the glob fuzzer)")
    func nulInID() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let before = daemon.engine.scene.elements.map(\.id)
        daemon.receive(#"{"id": 1, "op": "add_element", "element": {"id": "car\u0000", "center": [10, 20], "size": [30, 40]}}"#, from: session)
        let reply = try #require(try output.take().first { $0["id"]?.integer == 1 })
        #expect(reply["error"]?["code"]?.string == "bad_value", "\(reply)")
        #expect(daemon.engine.scene.elements.map(\.id) == before, "the scene changed")
        // A key with a NUL is no better.
        daemon.receive(#"{"id": 2, "op": "add_element", "element": {"id": "car", "center": [10, 20], "size": [30, 40], "tossable\u0000x": {}}}"#, from: session)
        #expect(try output.take().first { $0["id"]?.integer == 2 }?["error"]?["code"]?.string == "bad_value")
        #expect(daemon.engine.scene.elements.map(\.id) == before)
    }
}

extension ElementIDTests {
    @Test("an id not in NFC, or with an invisible character, is refused as the configuration file refuses it; an NFC id comes back in the bytes sent")
    func unicodeForms() throws {
        let (daemon, _) = try makeDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        let before = daemon.engine.scene.elements.map(\.id)
        for (number, id) in [(1, #"cafe\u0301"#), (2, #"card\u200d"#), (3, #"card\ufeff"#), (4, #"\u00adcard"#)] {
            daemon.receive(#"{"id": \#(number), "op": "add_element", "element": {"id": "\#(id)", "center": [10, 20], "size": [30, 40]}}"#, from: session)
            let reply = try #require(try output.take().first { $0["id"]?.integer == number })
            #expect(reply["error"]?["code"]?.string == "bad_value", "\(id): \(reply)")
            #expect(daemon.engine.scene.elements.map(\.id) == before, "\(id) was added")
        }
        daemon.receive(#"{"id": 5, "op": "add_element", "element": {"id": "cafe\u0301", "center": [10, 20], "size": [30, 40]}}"#, from: session)
        let message = try #require(try output.take().first { $0["id"]?.integer == 5 }?["error"]?["message"]?.string)
        #expect(message.contains("Normalization Form C") && message.contains("precomposed"), "\(message)")
        // Precomposed, it is accepted, and its streams are named in the very bytes sent.
        daemon.receive(#"{"id": 6, "op": "add_element", "element": {"id": "caf\u00e9", "center": [10, 20], "size": [30, 40]}}"#, from: session)
        #expect(try output.take().first { $0["id"]?.integer == 6 }?["ok"]?.bool == true)
        let names = daemon.engine.streams.map(\.stream).filter { $0.hasSuffix(".position") }
        #expect(names.contains { Array($0.utf8) == Array("caf\u{E9}.position".utf8) }, "\(names)")
    }
}

/// A NIO channel on one end of a socket pair, on a loop of its own, and the other end for
/// the test to read, each read giving up after 10 s.
struct ChannelPair {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let channel: Channel
    /// NIO's end, and the test's.
    let socket: Int32
    let peer: Int32

    init() throws {
        var pair: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        (socket, peer) = (pair[0], pair[1])
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(peer, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        channel = try ClientBootstrap(group: group).withConnectedSocket(socket).wait()
    }

    func close() {
        Glibc.close(peer)
        try? group.syncShutdownGracefully()
    }

    /// Reads until the connection ends: what arrived, and why reading stopped if not at the
    /// end (the deadline, as strerror says it).
    func readToEnd() -> (bytes: [UInt8], error: String?) {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(peer, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count < 0 { return (bytes, String(cString: strerror(errno))) }
            if count == 0 { return (bytes, nil) }
            bytes += chunk[..<count]
        }
    }
}

@Suite("Client output bounds", .timeLimit(.minutes(1)))
struct ClientOutputBoundTests {
    @Test("a client over 4 MiB of pending output is dropped at once, with its bye")
    func overflowDropsAtOnce() throws {
        let pair = try ChannelPair()
        defer { pair.close() }
        let channel = pair.channel
        let (closed, bytes) = try channel.eventLoop.submit {
            let output = ChannelOutput(channel: channel, lock: DaemonLock())
            let line = Array((String(repeating: "x", count: 1023) + "\n").utf8)[...]
            // Lines that do not coalesce (replies, gesture states): 5 MiB of them, well
            // within 5 s, so only the bound at queuing can drop the client.
            var sent = 0
            while sent < 5 << 20 && !output.isClosed {
                output.send(line, coalescing: nil)
                output.flush()
                sent += 1024
            }
            return (output.isClosed, output.pendingBytes)
        }.wait()
        #expect(closed, "the client was dropped when it went over")
        #expect(bytes <= SlowClientRule.pendingLimit)
        // The peer reads what was written before, then the end: within a deadline.
        let (received, error) = pair.readToEnd()
        #expect(error == nil, "the connection was not closed: \(error ?? "")")
        #expect(received.count < 4 << 20, "what waited was dropped, not sent")
    }

    @Test("written straight to the socket, found by its cookie: what the socket does not take waits and arrives in order, and closing ends the connection")
    func directWrites() throws {
        let pair = try ChannelPair()
        defer { pair.close() }
        let channel = pair.channel
        let socket = try SocketDescriptor.duplicate(of: channel).wait()
        let duplicate = try #require(socket, "the channel's socket was found")
        #expect(duplicate != pair.socket, "a duplicate, not NIO's own descriptor")
        let cookie = { (descriptor: Int32) -> UInt64 in
            var value: UInt64 = 0
            var length = socklen_t(8)
            _ = getsockopt(descriptor, SOL_SOCKET, 57, &value, &length)
            return value
        }
        #expect(cookie(duplicate) == cookie(pair.socket))
        // 3,000 numbered lines of 1 KiB: far more than the socket buffer, under the 4 MiB bound.
        let count = 3000
        let output = try channel.eventLoop.submit {
            let output = ChannelOutput(channel: channel, lock: DaemonLock(), socket: duplicate)
            for number in 0..<count {
                let text = "\(number) " + String(repeating: "x", count: 1017 - String(number).count) + "\n"
                output.send(Array(text.utf8)[...], coalescing: nil)
                output.flush()
            }
            return NIOLoopBound(output, eventLoop: channel.eventLoop)
        }.wait()
        #expect(try channel.eventLoop.submit { output.value.writesDirectly }.wait())
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while received.count < count * 1019 {
            let read = Glibc.read(pair.peer, &chunk, chunk.count)
            if read < 0 && errno == EINTR { continue }
            try #require(read > 0, "stopped after \(received.count) bytes: \(String(cString: strerror(errno)))")
            received += chunk[..<read]
        }
        let lines = received.split(separator: UInt8(ascii: "\n"))
        #expect(lines.count == count)
        #expect(lines.enumerated().allSatisfy { index, line in line.prefix { $0 != UInt8(ascii: " ") }.elementsEqual("\(index)".utf8) }, "in order, none lost")
        // Closing: the bye, then the end of the connection (the duplicate closed with NIO's).
        try channel.eventLoop.submit { output.value.close(saying: Array("bye\n".utf8)[...]) }.wait()
        let (tail, error) = pair.readToEnd()
        #expect(error == nil, "the connection did not end: \(error ?? "")")
        #expect(String(decoding: tail, as: UTF8.self) == "bye\n")
    }
}

@Suite("Control policy and socket addresses")
struct ControlPolicyTests {
    @Test("a user in more than 64 groups is found in the last of them")
    func manyGroups() {
        let groups = (1000..<1100).map { gid_t($0) }
        // getgrouplist's contract: -1 and the size needed when the list does not fit.
        let lookup: (UnsafeMutablePointer<gid_t>, UnsafeMutablePointer<Int32>) -> Int32 = { list, count in
            guard Int(count.pointee) >= groups.count else {
                count.pointee = Int32(groups.count)
                return -1
            }
            for (index, gid) in groups.enumerated() { list[index] = gid }
            count.pointee = Int32(groups.count)
            return Int32(groups.count)
        }
        #expect(ControlPolicy.groupList(lookup) == groups)
        let policy = ControlPolicy(daemonUID: 999, groups: [1099], groupsOfUser: { _, _ in ControlPolicy.groupList(lookup) })
        #expect(policy.allows(PeerCredentials(pid: 1, uid: 4242, gid: 1000)))
        #expect(!ControlPolicy(daemonUID: 999, groups: [5], groupsOfUser: { _, _ in groups }).allows(PeerCredentials(pid: 1, uid: 4242, gid: 1000)))
        // The real lookup: root's groups include its primary group.
        #expect(ControlPolicy.systemGroups(uid: 0, primary: 0)?.contains(0) == true)
    }

    @Test("a socket path longer than sun_path is an error, not cut short")
    func longPath() throws {
        let fits = "/" + String(repeating: "a", count: SocketPathTooLong.maximum - 1)
        #expect(throws: Never.self) { _ = try unixSocketAddress(fits) }
        #expect(throws: SocketPathTooLong.self) { _ = try unixSocketAddress(fits + "b") }
    }
}
