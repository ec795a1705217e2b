import CYaml

/// One node of a YAML document, with the line it starts on: what the libinput recording
/// reader needs of YAML (scalars as their text, lists, mappings), no more.
///
/// Scalars stay text: the reader decides what a number is, so `0x39` and `57` are read by one
/// rule and YAML 1.1's other scalar forms (`yes`, `1_000`, octal) are never guessed at.
struct YAMLNode {
    enum Content {
        case scalar(String)
        case sequence([YAMLNode])
        case mapping([(key: YAMLNode, value: YAMLNode)])
    }

    var content: Content
    /// The line the node starts on, from 1.
    var line: Int

    /// The value of the mapping's first key written as `key`, if this is a mapping that has one.
    subscript(key: String) -> YAMLNode? {
        guard case .mapping(let pairs) = content else { return nil }
        for pair in pairs {
            if case .scalar(let text) = pair.key.content, text == key { return pair.value }
        }
        return nil
    }
}

/// A YAML document composed from libyaml's parser events into ``YAMLNode``s.
///
/// libyaml does the reading (encodings, flow and block styles, quoting, escapes, comments);
/// this only builds the tree. Aliases become the node their anchor named: arrays are
/// copy-on-write, so a list of a thousand aliases costs a thousand references, not copies,
/// and whoever walks the tree bounds what it reads.
enum YAMLDocument {
    /// How deeply lists and mappings may nest. A recording needs 5; the bound keeps a hostile
    /// `[[[[…` from exhausting the stack when the tree is freed.
    static let maximumDepth = 64

    /// Why a text is not a YAML document, at its line (from 1).
    struct Failure: Error {
        var line: Int
        var problem: String
    }

    /// The text's one document, or nil when it holds none (empty, or comments only).
    static func compose(_ text: String) throws(Failure) -> YAMLNode? {
        var text = text
        let result = text.withUTF8 { bytes in
            var composer = Composer()
            return Result { () throws(Failure) in try composer.compose(bytes) }
        }
        return try result.get()
    }

    /// A list or mapping whose end has not been read yet.
    private struct OpenCollection {
        var line: Int
        var anchor: String?
        var isMapping: Bool
        /// A mapping's keys and values, alternating.
        var items: [YAMLNode] = []
    }

    private struct Composer {
        var open: [OpenCollection] = []
        var anchors: [String: YAMLNode] = [:]
        var root: YAMLNode?
        var documents = 0

        mutating func compose(_ bytes: UnsafeBufferPointer<UInt8>) throws(Failure) -> YAMLNode? {
            var parser = yaml_parser_t()
            guard yaml_parser_initialize(&parser) == 1 else { throw Failure(line: 1, problem: "out of memory") }
            defer { yaml_parser_delete(&parser) }
            yaml_parser_set_input_string(&parser, bytes.baseAddress ?? UnsafePointer(bitPattern: 1), bytes.count)
            while true {
                var event = yaml_event_t()
                guard yaml_parser_parse(&parser, &event) == 1 else { throw Self.failure(of: parser, in: bytes) }
                defer { yaml_event_delete(&event) }
                if event.type == YAML_STREAM_END_EVENT { return root }
                try take(event)
            }
        }

        private mutating func take(_ event: yaml_event_t) throws(Failure) {
            let line = Int(event.start_mark.line) + 1
            switch event.type {
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 { throw Failure(line: line, problem: "a second YAML document: a recording is one") }
            case YAML_SCALAR_EVENT:
                let scalar = event.data.scalar
                let text = String(decoding: UnsafeBufferPointer(start: scalar.value, count: scalar.length), as: UTF8.self)
                add(YAMLNode(content: .scalar(text), line: line), anchor: Self.text(scalar.anchor))
            case YAML_SEQUENCE_START_EVENT:
                try begin(OpenCollection(line: line, anchor: Self.text(event.data.sequence_start.anchor), isMapping: false))
            case YAML_MAPPING_START_EVENT:
                try begin(OpenCollection(line: line, anchor: Self.text(event.data.mapping_start.anchor), isMapping: true))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                let collection = open.removeLast()
                add(Self.node(of: collection), anchor: collection.anchor)
            case YAML_ALIAS_EVENT:
                let name = Self.text(event.data.alias.anchor) ?? ""
                guard let node = anchors[name] else {
                    throw Failure(line: line, problem: "the alias *\(name.prefix(40)) names no anchor before it")
                }
                add(node, anchor: nil)
            default:
                break
            }
        }

        private mutating func begin(_ collection: OpenCollection) throws(Failure) {
            guard open.count < YAMLDocument.maximumDepth else {
                throw Failure(line: collection.line, problem: "lists and mappings nested more than \(YAMLDocument.maximumDepth) deep")
            }
            open.append(collection)
        }

        private mutating func add(_ node: YAMLNode, anchor: String?) {
            if let anchor { anchors[anchor] = node }
            if open.isEmpty {
                root = node
            } else {
                open[open.count - 1].items.append(node)
            }
        }

        private static func node(of collection: OpenCollection) -> YAMLNode {
            guard collection.isMapping else { return YAMLNode(content: .sequence(collection.items), line: collection.line) }
            var pairs: [(key: YAMLNode, value: YAMLNode)] = []
            pairs.reserveCapacity(collection.items.count / 2)
            var index = 0
            while index + 1 < collection.items.count {
                pairs.append((collection.items[index], collection.items[index + 1]))
                index += 2
            }
            return YAMLNode(content: .mapping(pairs), line: collection.line)
        }

        private static func text(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
            guard let pointer else { return nil }
            return String(cString: pointer)
        }

        /// libyaml's problem, at its line. Never the context it quotes, which may be anything.
        private static func failure(of parser: yaml_parser_t, in bytes: UnsafeBufferPointer<UInt8>) -> Failure {
            let problem = parser.problem.map { String(cString: $0) } ?? "unreadable"
            if parser.error == YAML_READER_ERROR {
                // A reader error (a byte YAML does not allow) has an offset, not a line.
                let end = min(Int(parser.problem_offset), bytes.count)
                let line = bytes[..<end].reduce(1) { $1 == UInt8(ascii: "\n") ? $0 + 1 : $0 }
                return Failure(line: line, problem: problem)
            }
            return Failure(line: Int(parser.problem_mark.line) + 1, problem: problem)
        }
    }
}
