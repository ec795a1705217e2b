import MotionDaemon

/// The statuses the listener answers with: a switch to WebSocket, a page, its refusals, and
/// `/healthz`'s verdict on a daemon that reads no touchscreen (503).
private let statuses: Set<Substring> = ["101", "200", "400", "403", "404", "405", "421", "503"]

/// The HTTP side of the listener on any bytes, split into reads where the input says: every
/// response is one of its statuses, nothing follows a 400 or a `Connection: close`, and a
/// connection that did not become a WebSocket is closed once its request is 10 s overdue.
func fuzzHTTP(_ bytes: [UInt8]) throws {
    var input = FuzzBytes(bytes)
    let connection = FuzzWebConnection()
    defer { connection.end() }
    // The first byte picks how many reads the rest arrives in, as a slow client sends it.
    let reads = Int(input.byte() % 4) + 1
    let rest = Array(input.rest())
    let step = max(1, rest.count / reads)
    var output: [UInt8] = []
    for start in stride(from: 0, to: rest.count, by: step) {
        connection.send(rest[start..<min(start + step, rest.count)])
        output += connection.take()
    }
    let text = String(decoding: output, as: UTF8.self)
    let upgraded = text.hasPrefix("HTTP/1.1 101")
    if !upgraded {
        // Bodies end in a newline, so each status line starts a line of its own.
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) where line.hasPrefix("HTTP/1.") {
            let status = line.dropFirst(9).prefix(3)
            try fuzzCheck(statuses.contains(status), "a status the listener does not answer with: \(line)")
        }
        try fuzzCheck(output.isEmpty || text.hasPrefix("HTTP/1."), "a response that is not HTTP: \(text.prefix(200))")
        // Nothing is answered after a 400 (NIO's error handler may answer one broken request
        // twice, when its parser reports two errors for it: on a socket the second write
        // finds the output shut).
        // Status lines start lines of their own; a body may say "HTTP/1.1" in its text.
        if let badRequest = text.range(of: " 400 Bad Request\r\n") {
            let later = text[badRequest.upperBound...].split(separator: "\n").filter { $0.hasPrefix("HTTP/1.") && !$0.hasPrefix("HTTP/1.1 400 ") }
            try fuzzCheck(later.isEmpty, "a response after a 400: \(text.debugDescription)")
        }
        connection.wait(seconds: 11)
        try fuzzCheck(!connection.channel.isActive, "a connection without a whole request still open 11 s later: \(text.prefix(200))")
    }
}
