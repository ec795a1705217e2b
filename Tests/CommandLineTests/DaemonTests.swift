import Foundation
import Glibc
import Testing

extension Daemons {
    @Suite("motiond end to end")
    struct DaemonTests {
        static let bundled = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path
        static let example = EndToEnd.repository.appendingPathComponent("config/motiond.toml").path

        @Test("a live touchscreen through umockdev: the card follows the drag, then springs to a snap point; SIGTERM removes the socket")
        func liveDrag() throws {
            let recording = EndToEnd.recordings.appendingPathComponent("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu")
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let files = try EndToEnd.convert(recording, into: directory)
            let socket = directory.appendingPathComponent("motiond.sock").path
            let run = try Run("umockdev-wrapper", [
                "/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/daemon_session.py").path,
                files.device, files.ioctl, files.events, socket, "card.position", "card.state", "--",
                Run.productsDirectory.appendingPathComponent("motiond").path, "--config", Self.example, "--socket", socket,
            ], absolute: true)
            #expect(run.status == 0, "\(run.error)")
            let lines = try run.jsonLines()
            let live = lines.filter { $0["stream"] as? String == "card.position" }.compactMap { $0["value"] as? [String: Double] }.dropFirst()

            // What the same recording gives offline: during the drag, positions come from touch
            // frames alone, so every live position is one of the offline ones, in the same order;
            // the spring after the release runs on real time and only its end is compared. On a
            // busy machine the daemon may fall behind the fake touchscreen and coalesce frames
            // that queued up (docs/protocol.md, Slow clients): a few positions are then skipped,
            // never changed.
            let offline = try Run("motionctl", ["simulate", "--config", Self.example, recording.path, "--json"]).jsonLines()
                .filter { $0["stream"] as? String == "card.position" }.compactMap { $0["value"] as? [String: Double] }
            let dragged = 140
            // Half at least: a machine busy enough (several builds on two cores) makes the daemon
            // coalesce more than a few, and which positions arrive is what is checked.
            try #require(live.count > dragged / 2 && offline.count > dragged)
            let draggedOffline = Array(offline.prefix(dragged))
            let liveDuringDrag = live.prefix { position in draggedOffline.contains(position) }
            // The first live position is the drag's first, unless the daemon coalesced the first
            // frames too (a fresh clone's run beside the kernel lab's guests did): then one of
            // the drag's next few (eight were coalesced in that run).
            #expect(live.first.map { Array(draggedOffline.prefix(20)).contains($0) } == true,
                    "the first live position \(String(describing: live.first)) is none of the drag's first twenty: \(Array(draggedOffline.prefix(20)))")
            #expect(liveDuringDrag.count >= dragged / 2, "most of the drag's positions arrive: \(liveDuringDrag.count) of \(dragged)")
            #expect(isSubsequence(Array(liveDuringDrag), of: draggedOffline), "live positions are offline ones, in order")
            #expect(live.last == offline.last, "the card rests on the same snap point")
            let stopped = try #require(lines.last)
            #expect(stopped["step"] as? String == "stopped" && stopped["code"] as? Int == 0 && stopped["socket_left"] as? Bool == false)
        }

        @Test("a client that never reads does not delay a fast one, which gets every value; it is coalesced, then dropped")
        func slowClient() throws {
            // At 4× the fast client has seconds of slack in its socket buffer before the daemon
            // would see it blocked, so a busy test machine does not turn it into a slow client.
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--loop", "--speed", "4"])
            // Once, loaded by the labs beside it, a client here waited 30 s for a line: say
            // what motiond did meanwhile.
            try daemon.withLogOnFailure { try slowAndFastClients(on: daemon) }
        }

        func slowAndFastClients(on daemon: RunningDaemon) throws {
            let slow = try TestClient(daemon.socket)
            _ = try slow.next()
            slow.send(#"{"id": 1, "op": "subscribe", "streams": ["*"]}"# + "\n")
            let fast = try TestClient(daemon.socket)
            _ = try fast.next()
            _ = try fast.request(#"{"id": 1, "op": "subscribe", "streams": ["surface.position"]}"#)
            var sequence: [Int] = []
            let watcher = try TestClient(daemon.socket)
            _ = try watcher.next()
            // The clients as the daemon sees them: the slow one holds every stream, the fast one one.
            func clients(_ round: Int) throws -> (slow: [String: Any]?, fast: [String: Any]?) {
                let stats = try #require(try watcher.request(#"{"id": \#(round), "op": "stats"}"#)["result"] as? [String: Any])
                let clients = try #require(stats["clients"] as? [[String: Any]])
                return (clients.first { ($0["subscriptions"] as? Int ?? 0) > 1 }, clients.first { $0["subscriptions"] as? Int == 1 })
            }
            var slowCoalesced = 0, slowDropped = false
            let deadline = Date().addingTimeInterval(90)
            // Read the fast client's values until the daemon has given up on the slow one.
            for round in 0... where Date() < deadline {
                for _ in 0..<50 {
                    guard let message = try fast.next() else { break }
                    if let seq = message["seq"] as? Int, message["stream"] as? String == "surface.position" { sequence.append(seq) }
                }
                guard round % 5 == 0 else { continue }
                let (slowClient, fastClient) = try clients(round)
                #expect(fastClient != nil, "the fast client was disconnected")
                slowCoalesced = Swift.max(slowCoalesced, slowClient?["coalesced"] as? Int ?? 0)
                if slowCoalesced > 0 && slowClient == nil {
                    slowDropped = true
                    break
                }
            }
            #expect(slowCoalesced > 0, "the slow client's updates were coalesced")
            #expect(slowDropped, "the slow client was disconnected")
            #expect(sequence.count > 500)
            // The initial value carries the current seq; after it, every value, none skipped. A value
            // can only go missing by the daemon coalescing this client's own queue, which it counts:
            // should the test process itself have stalled, the message says so.
            let fastCoalesced = try clients(-1).fast?["coalesced"] as? Int ?? -1
            let gaps = zip(sequence.dropFirst(2), sequence.dropFirst()).filter { $0 != $1 + 1 }.count
            #expect(gaps == 0, "the fast client missed values \(gaps) times; the daemon coalesced \(fastCoalesced) of its values (nonzero: this test process did not read for seconds)")
            let (status, log) = daemon.stop()
            #expect(status == 0)
            #expect(log.contains("<4>disconnected 1 client(s) that stopped reading"))
        }

        @Test("malformed lines get errors and the connection stays usable; a line over 64 KiB closes it")
        func malformedLines() throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled])
            let client = try TestClient(daemon.socket)
            #expect(try client.next()?["event"] as? String == "hello")
            for (line, code) in [("nonsense", "bad_json"), (#"{"id": 1}"#, "bad_request"), (#"{"id": 2, "op": "fly"}"#, "unknown_op")] {
                let reply = try client.request(line)
                #expect((reply["error"] as? [String: Any])?["code"] as? String == code)
            }
            #expect(try client.request(#"{"id": 3, "op": "list"}"#)["ok"] as? Bool == true)
            client.send(String(repeating: "x", count: 70_000) + "\n")
            let error = try #require(try client.next())
            #expect((error["error"] as? [String: Any])?["code"] as? String == "line_too_long")
            #expect(try client.next()?["event"] as? String == "bye")
            #expect(try client.next() == nil, "closed")
            #expect(daemon.stop().status == 0)
        }

        @Test("control operations need root, motiond's user or a control group; reading does not",
              .enabled(if: getuid() == 0, "setpriv --reuid needs root to run motionctl as nobody"))
        func access() throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled], configuration: "[daemon]\nsocket_group = \"nogroup\"\n\n[[element]]\nid = \"surface\"\ncenter = [960, 540]\nsize = [1920, 1080]\n")
            let nobody = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", Run.productsDirectory.appendingPathComponent("motionctl").path]
            let set = try Run(nobody[0], Array(nobody.dropFirst()) + ["set", "--socket", daemon.socket, "surface.rotation", "0.5"], absolute: true)
            #expect(set.status == 1)
            #expect(set.error.contains("forbidden"), "\(set.error)")
            let get = try Run(nobody[0], Array(nobody.dropFirst()) + ["get", "--socket", daemon.socket, "surface.rotation"], absolute: true)
            #expect(get.status == 0, "\(get.error)")
            let root = try Run("motionctl", ["set", "--socket", daemon.socket, "surface.rotation", "0.5"])
            #expect(root.status == 0 && root.output.contains("0.5"), "\(root.error)")
            var mode = stat()
            stat(daemon.socket, &mode)
            #expect(mode.st_mode & 0o777 == 0o660)
            #expect(mode.st_gid == 65534)
            #expect(daemon.stop().status == 0)
        }

        @Test("SIGHUP reloads a good configuration; a broken one is refused with file and line, and the old one stays")
        func reload() throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled], configuration: "[[element]]\nid = \"one\"\ncenter = [100, 100]\nsize = [50, 50]\n")
            let file = daemon.directory.appendingPathComponent("motiond.toml").path
            let client = try TestClient(daemon.socket)
            _ = try client.next()
            #expect(try client.elementIDs() == ["one"])
            try "[[element]]\nid = \"two\"\ncenter = [100, 100]\nsize = [50, 50]\n".write(toFile: file, atomically: true, encoding: .utf8)
            daemon.signal(SIGHUP)
            try daemon.waitFor("READY=1")
            #expect(try client.elementIDs() == ["two"])
            try "[[element]]\nid = \"three\"\ncenter = [100, 100]\nsize = [50, 50]\nshape = \"round\"\n".write(toFile: file, atomically: true, encoding: .utf8)
            daemon.signal(SIGHUP)
            try daemon.waitFor("READY=1")
            #expect(try client.elementIDs() == ["two"])
            let lastError = try client.lastConfigError()
            #expect(lastError == "\(file):5: unknown key 'shape' in [element[0]]")
            let (status, log) = daemon.stop()
            #expect(status == 0)
            #expect(log.contains("<3>refused to reload: \(file):5"))
        }

        @Test("SIGHUP reads the drop-ins in conf.d too: one added is merged, a broken one is refused with its file and line")
        func reloadDropIns() throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled], configuration: "[[element]]\nid = \"one\"\ncenter = [100, 100]\nsize = [50, 50]\n")
            let dropIns = daemon.directory.appendingPathComponent("conf.d")
            try FileManager.default.createDirectory(at: dropIns, withIntermediateDirectories: true)
            let client = try TestClient(daemon.socket)
            _ = try client.next()
            #expect(try client.elementIDs() == ["one"])
            try "[[element]]\nid = \"two\"\ncenter = [300, 100]\nsize = [50, 50]\n".write(to: dropIns.appendingPathComponent("10-two.toml"), atomically: true, encoding: .utf8)
            daemon.signal(SIGHUP)
            try daemon.waitFor("READY=1")
            #expect(try client.elementIDs() == ["one", "two"])
            let broken = dropIns.appendingPathComponent("20-broken.toml")
            try "[screen]\nwidth = \"wide\"\n".write(to: broken, atomically: true, encoding: .utf8)
            daemon.signal(SIGHUP)
            try daemon.waitFor("READY=1")
            #expect(try client.elementIDs() == ["one", "two"])
            let lastError = try client.lastConfigError()
            #expect(lastError?.hasPrefix("\(broken.path):2: width must be a number") == true, "\(lastError ?? "none")")
            #expect(daemon.stop().status == 0)
        }

        @Test("a stale socket file is replaced; a live one is an error")
        func staleAndLiveSockets() throws {
            let first = try RunningDaemon(["--replay", Self.bundled])
            // A second motiond on the same socket refuses to start.
            let second = try Run("motiond", ["--replay", Self.bundled, "--socket", first.socket])
            #expect(second.status == 1)
            #expect(second.error.contains("another motiond is already listening on \(first.socket)"))
            // A crash leaves the socket file behind: SIGKILL, then a new motiond replaces it.
            first.signal(SIGKILL)
            try #require(first.waitForExit(), "SIGKILL did not end motiond")
            #expect(FileManager.default.fileExists(atPath: first.socket))
            let third = try RunningDaemon(["--replay", Self.bundled], socket: first.socket)
            let client = try TestClient(first.socket)
            #expect(try client.next()?["event"] as? String == "hello")
            let (status, log) = third.stop()
            #expect(status == 0 && log.contains("listening on \(first.socket)"))
            #expect(!FileManager.default.fileExists(atPath: first.socket), "removed on SIGTERM")
        }

        @Test("socket activation: systemd's socket, passed as LISTEN_FDS, is used")
        func socketActivation() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let socket = directory.appendingPathComponent("activated.sock").path
            let activator = Process()
            activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
            activator.arguments = ["-l", socket, Run.productsDirectory.appendingPathComponent("motiond").path, "--replay", Self.bundled]
            let errors = Pipe()
            activator.standardError = errors
            let exit = ExitWatch()
            exit.watch(activator)
            try activator.run()
            defer {
                activator.terminate()
                if !exit.wait(seconds: 10) { kill(activator.processIdentifier, SIGKILL) }
            }
            // It says when it listens; a reader that ends (it exited) or a deadline stops the wait.
            let stderr = ThreadedReader(errors.fileHandleForReading)
            let said = stderr.waitUntil(seconds: 60) { String(decoding: $0, as: UTF8.self).contains("Listening on") }
            try #require(String(decoding: said, as: UTF8.self).contains("Listening on"), "\(String(decoding: said, as: UTF8.self))")
            let client = try TestClient(socket)
            #expect(try client.next()?["event"] as? String == "hello")
            #expect(try client.request(#"{"id": 1, "op": "list"}"#)["ok"] as? Bool == true)
            // It says it uses systemd's socket, not a path of its own it never bound.
            let log = String(decoding: stderr.waitUntil(seconds: 30) { String(decoding: $0, as: UTF8.self).contains("listening on") }, as: UTF8.self)
            #expect(log.contains("listening on the socket systemd passed"), "\(log)")
        }

        @Test("socket activation with motiond-web.socket: the TCP listener systemd passes, named websocket, serves the pages and the WebSocket")
        func webSocketActivation() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let socket = directory.appendingPathComponent("activated.sock").path
            // A port free a moment ago; should another process take it first, the activator
            // fails to listen and the test says so.
            let port = try EndToEnd.freeLoopbackPort(SOCK_STREAM)
            let activator = Process()
            activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
            activator.arguments = ["-l", socket, "-l", "127.0.0.1:\(port)", "--fdname=motiond.socket:websocket",
                                   Run.productsDirectory.appendingPathComponent("motiond").path, "--replay", Self.bundled]
            let errors = Pipe()
            activator.standardError = errors
            let exit = ExitWatch()
            exit.watch(activator)
            try activator.run()
            defer {
                activator.terminate()
                if !exit.wait(seconds: 10) { kill(activator.processIdentifier, SIGKILL) }
            }
            let stderr = ThreadedReader(errors.fileHandleForReading)
            let said = stderr.waitUntil(seconds: 60) { String(decoding: $0, as: UTF8.self).components(separatedBy: "Listening on").count > 2 }
            try #require(String(decoding: said, as: UTF8.self).components(separatedBy: "Listening on").count > 2, "\(String(decoding: said, as: UTF8.self))")
            // The first connection starts motiond; the page comes over the passed TCP socket.
            // (Read with a plain socket: a Foundation Process started while the activator runs
            // was seen never to be reaped, hanging the test past its deadline.)
            let response = try EndToEnd.httpGet(port: port, path: "/motiond.js")
            let module = try String(contentsOf: EndToEnd.repository.appendingPathComponent("clients/js/motiond.js"), encoding: .utf8)
            #expect(response.hasPrefix("HTTP/1.1 200 OK") && response.hasSuffix("\r\n\r\n" + module), "\(response.prefix(500))")
            let log = String(decoding: stderr.waitUntil(seconds: 30) { String(decoding: $0, as: UTF8.self).contains("websocket on") }, as: UTF8.self)
            #expect(log.contains("websocket on 127.0.0.1:\(port)"), "\(log)")
            // And the Unix socket is still the control socket.
            let client = try TestClient(socket)
            #expect(try client.next()?["event"] as? String == "hello")
        }

        @Test("the example clients in Python and Node.js follow an element", arguments: [
            ["/usr/bin/python3", "examples/python/subscribe.py"], ["node", "examples/node/subscribe.js"],
        ])
        func examples(command: [String]) throws {
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--loop"])
            let script = EndToEnd.repository.appendingPathComponent(command[1]).path
            let run = try Run(command[0], [script, "surface", "--socket", daemon.socket, "--count", "5"], absolute: true)
            #expect(run.status == 0, "\(run.error)")
            #expect(run.lines.first == "connected to motiond 0.1.0")
            #expect(run.lines.dropFirst().count == 5)
            #expect(run.lines.dropFirst().allSatisfy { $0.contains("surface.position x=") })
            #expect(daemon.stop().status == 0)
        }

        @Test("the example clients carry on through a restart, and follow an element a client added to where it was", arguments: [
            ["/usr/bin/python3", "examples/python/subscribe.py"], ["node", "examples/node/subscribe.js"],
        ])
        func examplesAcrossARestart(command: [String]) throws {
            let scratch = try EndToEnd.scratch()
            let state = scratch.appendingPathComponent("scene.json").path
            let first = try RunningDaemon(["--replay", Self.bundled, "--loop", "--config", Self.example, "--state", state])
            let control = try TestClient(first.socket)
            _ = try control.next()  // the hello
            _ = try control.request(#"{"id": 1, "op": "add_element", "element": {"id": "note", "center": [100, 100], "size": [50, 50], "draggable": {}}}"#)
            let example = Process()
            example.executableURL = command[0].hasPrefix("/") ? URL(fileURLWithPath: command[0]) : try Run.onPath(command[0])
            example.arguments = [EndToEnd.repository.appendingPathComponent(command[1]).path, "note", "--socket", first.socket]
            let output = Pipe(), errors = Pipe()
            example.standardOutput = output
            example.standardError = errors
            let exit = ExitWatch()
            exit.watch(example)
            try example.run()
            defer {
                if !exit.hasExited { example.terminate() }
                _ = exit.wait(seconds: 10)
            }
            let reader = ThreadedReader(output.fileHandleForReading)
            // What the example said on stderr, for a failure's message: an example that ends
            // early (it once did under load) says why there.
            let errorReader = ThreadedReader(errors.fileHandleForReading)
            func lines(_ data: Data) -> [String] { String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init) }
            func positions(_ lines: some Sequence<String>) -> [String] { lines.filter { $0.contains(" note.position x=") } }

            // The example follows the note; a client moves it; SIGTERM keeps where it is.
            _ = lines(reader.waitUntil(seconds: 30) { positions(lines($0)).count >= 1 })
            _ = try control.request(#"{"id": 2, "op": "set", "stream": "note.position", "value": {"x": 222, "y": 333}}"#)
            let before = lines(reader.waitUntil(seconds: 30) { positions(lines($0)).last?.hasSuffix("x=222.0 y=333.0") == true })
            try #require(positions(before).last?.hasSuffix("x=222.0 y=333.0") == true, "\(before)")
            #expect(first.stop().status == 0)
            let second = try RunningDaemon(["--config", Self.example, "--state", state], socket: first.socket)
            func after(_ all: [String]) -> [String]? {
                guard let reconnect = all.indices.filter({ all[$0].hasPrefix("connected to motiond") }).dropFirst().first else { return nil }
                return Array(all[(reconnect + 1)...])
            }
            let all = lines(reader.waitUntil(seconds: 30) { after(lines($0)).map { !positions($0).isEmpty } ?? false })
            let next = try #require(after(all).flatMap { positions($0).first },
                                    "the example did not follow the note after the restart: \(all); it had exited: \(exit.hasExited); its stderr: \(String(decoding: errorReader.waitUntil(seconds: 1) { _ in false }, as: UTF8.self))")
            #expect(next.hasSuffix(" note.position x=222.0 y=333.0"), "\(all)")
            #expect(second.stop().status == 0)
        }

        @Test("motionctl says how to start the daemon when it is not there, with exit code 3")
        func noDaemon() throws {
            let run = try Run("motionctl", ["status", "--socket", "/nonexistent/motiond.sock"])
            #expect(run.status == 3)
            #expect(run.error.contains("cannot connect to motiond at /nonexistent/motiond.sock"))
            #expect(run.error.contains("motiond --replay"))
        }

        @Test("the systemd units verify, and the service's exposure is 1.3 or lower")
        func systemdUnits() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            // The units name the installed binary; verify copies that name the built one.
            for unit in ["motiond.service", "motiond.socket", "motiond-web.socket"] {
                let text = try String(contentsOf: EndToEnd.repository.appendingPathComponent("systemd/\(unit)"), encoding: .utf8)
                    .replacingOccurrences(of: "/usr/local/bin/motiond", with: Run.productsDirectory.appendingPathComponent("motiond").path)
                try text.write(to: directory.appendingPathComponent(unit), atomically: true, encoding: .utf8)
            }
            let verify = try Run("systemd-analyze", ["verify", directory.appendingPathComponent("motiond.service").path,
                                                     directory.appendingPathComponent("motiond.socket").path,
                                                     directory.appendingPathComponent("motiond-web.socket").path], absolute: true)
            #expect(verify.status == 0 && verify.error.isEmpty, "\(verify.error)")
            let security = try Run("systemd-analyze", ["security", "--offline=true", EndToEnd.repository.appendingPathComponent("systemd/motiond.service").path], absolute: true)
            let line = try #require(security.lines.first { $0.contains("Overall exposure level") })
            let score = try #require(Double(line.split(separator: ":")[1].split(separator: " ")[0]))
            // 1.1 before [[tuio]]: sending UDP needs AF_INET and AF_INET6 (0.3 by the analyser's
            // count), which IPAddressAllow=localhost and SocketBindDeny=any confine to sending on
            // loopback; the analyser does not count those.
            #expect(score <= 1.3, "\(line)")
        }
    }
}

/// Whether `part` is `whole` with some elements left out, the rest in the same order.
func isSubsequence<T: Equatable>(_ part: [T], of whole: [T]) -> Bool {
    var rest = whole[...]
    for element in part {
        guard let found = rest.firstIndex(of: element) else { return false }
        rest = rest[(found + 1)...]
    }
    return true
}
