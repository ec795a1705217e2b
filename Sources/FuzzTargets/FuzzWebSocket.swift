import MotionServer
import MotionWire

/// The WebSocket side of the listener, after a browser's handshake: the input is a stream of
/// client frames, built from the input's choices (header bits, length, masked or not,
/// payload) so that most are well-formed enough to reach the rules, or, when its first byte
/// is odd, raw bytes. What the server sends must be unmasked frames of the kinds it sends
/// (text, pong, close), text that is a JSON object, close codes an endpoint may send, nothing
/// after a close, and the connection closed once a close was sent.
func fuzzWebSocket(_ bytes: [UInt8]) throws {
    var input = FuzzBytes(bytes)
    let connection = FuzzWebConnection()
    defer { connection.end() }
    connection.send(FuzzWebConnection.handshake)
    var output = connection.take()
    guard let end = output.indices.first(where: { output[$0...].starts(with: [13, 10, 13, 10]) }) else {
        throw BrokenInvariant(message: "the handshake was not answered")
    }
    try fuzzCheck(output.starts(with: Array("HTTP/1.1 101".utf8)), "the handshake was refused")
    output.removeFirst(end + 4)
    if input.byte() & 1 == 1 {
        connection.send(input.rest())
        output += connection.take()
    } else {
        while !input.isEmpty {
            connection.send(clientFrame(&input))
            output += connection.take()
        }
    }
    try checkServerFrames(output, closed: !connection.channel.isActive)
}

/// A client frame from the input's choices.
private func clientFrame(_ input: inout FuzzBytes) -> [UInt8] {
    let first = input.byte()  // FIN, RSV1-3 and the opcode, as they come
    let shape = input.byte()
    let length = shape & 0x40 != 0 ? Int(input.uint16() % 1200) : Int(shape & 0x3F)
    let masked = shape & 0x80 == 0  // mostly masked, as clients must
    var frame: [UInt8] = [first]
    switch length {
    case 0..<126: frame.append((masked ? 0x80 : 0) | UInt8(length))
    default: frame += [(masked ? 0x80 : 0) | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
    }
    let key: [UInt8] = [input.byte(), input.byte(), input.byte(), input.byte()]
    if masked { frame += key }
    for index in 0..<length {
        let byte = input.byte()
        frame.append(masked ? byte ^ key[index % 4] : byte)
    }
    return frame
}

/// The server's frames: unmasked, of the kinds it sends, nothing after a close.
private func checkServerFrames(_ bytes: [UInt8], closed: Bool) throws {
    var index = 0
    var sawClose = false
    while index < bytes.count {
        try fuzzCheck(!sawClose, "a frame after the close frame")
        try fuzzCheck(index + 2 <= bytes.count, "a server frame cut short")
        let opcode = bytes[index] & 0x0F
        try fuzzCheck(bytes[index] & 0x70 == 0 && bytes[index] & 0x80 != 0, "a server frame with reserved bits or not final")
        try fuzzCheck(bytes[index + 1] & 0x80 == 0, "a masked server frame")
        var length = Int(bytes[index + 1] & 0x7F), header = 2
        if length == 126 {
            length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            header = 4
        } else if length == 127 {
            length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[index + $1]) }
            header = 10
        }
        try fuzzCheck(index + header + length <= bytes.count, "a server frame cut short")
        let payload = bytes[(index + header)..<(index + header + length)]
        switch opcode {
        case 0x1:
            let json = try? JSONInput(parsing: payload)
            try fuzzCheck(json?.object != nil, "a text message that is not a JSON object: \(String(decoding: payload, as: UTF8.self))")
        case 0xA:
            try fuzzCheck(payload.count <= 125, "a pong over 125 bytes")
        case 0x8:
            sawClose = true
            if payload.count >= 2 {
                let code = Int(payload[payload.startIndex]) << 8 | Int(payload[payload.startIndex + 1])
                try fuzzCheck((1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code),
                          "close code \(code) may not be sent")
            } else {
                try fuzzCheck(payload.isEmpty, "a close body of one byte")
            }
        default:
            throw BrokenInvariant(message: "a server frame with opcode \(opcode)")
        }
        index += header + length
    }
    if sawClose { try fuzzCheck(closed, "the connection is open after its close frame") }
}
