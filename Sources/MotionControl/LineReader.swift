import Glibc

/// The lines of a file or of standard input, read a block at a time, each at most a length:
/// however large the input, or however long one of its lines, what is held is one block
/// and one line. Lines end at `\n`; the last may end at the end of the input instead.
struct LineReader: ~Copyable {
    /// Why reading stopped short.
    enum Failure: Error, CustomStringConvertible {
        /// The line numbered `line` (from 1) is longer than `limit` bytes.
        case tooLong(line: Int, limit: Int)
        /// The system refused to read, with this errno.
        case unreadable(Int32)

        var description: String {
            switch self {
            case .tooLong(let line, let limit): return "line \(line) is longer than \(limit) bytes"
            case .unreadable(let code): return String(cString: strerror(code))
            }
        }
    }

    /// How much is read at once.
    static let blockSize = 65_536

    private let descriptor: Int32
    private let closes: Bool
    /// The longest line taken, in bytes, without its `\n`.
    let limit: Int
    /// The line `next()` returned last, from 1; 0 before the first.
    private(set) var lineNumber = 0
    private var buffer: [UInt8]
    /// What of `buffer` is read but not yet returned.
    private var start = 0, end = 0
    private var atEnd = false

    /// The lines of the file at `path`, or of standard input for `-`.
    init(path: String, limit: Int) throws(Failure) {
        if path == "-" {
            descriptor = STDIN_FILENO
            closes = false
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw .unreadable(errno) }
            closes = true
        }
        self.limit = limit
        buffer = [UInt8](repeating: 0, count: Swift.max(Self.blockSize, limit + 1))
    }

    deinit {
        if closes { close(descriptor) }
    }

    /// The next line, without its `\n`; nil at the end of the input.
    mutating func next() throws(Failure) -> [UInt8]? {
        while true {
            if let newline = buffer[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                return try take(upTo: newline, skipping: 1)
            }
            // No whole line in what was read: one longer than the limit is refused before
            // more of it is read.
            if end - start > limit { throw .tooLong(line: lineNumber + 1, limit: limit) }
            if atEnd { return start < end ? try take(upTo: end, skipping: 0) : nil }
            try fill()
        }
    }

    /// The line up to `stop`, copied out (at most `limit` bytes), so that the buffer is not
    /// shared when it is next filled.
    private mutating func take(upTo stop: Int, skipping: Int) throws(Failure) -> [UInt8] {
        lineNumber += 1
        guard stop - start <= limit else { throw .tooLong(line: lineNumber, limit: limit) }
        let line = Array(buffer[start..<stop])
        start = stop + skipping
        return line
    }

    /// Moves what is left to the front of the buffer and reads after it.
    private mutating func fill() throws(Failure) {
        if start > 0 {
            buffer.withUnsafeMutableBufferPointer { bytes in
                _ = memmove(bytes.baseAddress!, bytes.baseAddress! + start, end - start)
            }
            end -= start
            start = 0
        }
        while true {
            let count = buffer.withUnsafeMutableBufferPointer { bytes in
                read(descriptor, bytes.baseAddress! + end, bytes.count - end)
            }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw .unreadable(errno) }
            if count == 0 { atEnd = true } else { end += count }
            return
        }
    }
}
