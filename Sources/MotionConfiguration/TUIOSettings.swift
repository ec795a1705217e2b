import Glibc
import TouchModel

/// One `[[tuio]]` table: a receiver of TUIO bundles over UDP (docs/kiosk.md, TUIO).
public struct TUIOSettings: Sendable, Hashable {
    /// The TUIO generation to speak.
    public enum Version: String, Sendable, Hashable {
        case v1_1 = "1.1"
        case v2_0 = "2.0"
    }

    /// Which elements go out as tangible objects.
    public enum Elements: Sendable, Hashable {
        /// Those whose id matches one of these shell globs (an id is a glob matching itself).
        case matching([String])
        /// Every element, those added later included.
        case all

        /// Whether the element `id` goes out.
        public func includes(_ id: String) -> Bool {
            switch self {
            case .all: return true
            case .matching(let patterns): return patterns.contains { globMatches(Substring($0), Substring(id)) }
            }
        }

        /// Whether no element ever goes out.
        public var isEmpty: Bool { if case .matching(let patterns) = self { patterns.isEmpty } else { false } }
    }

    /// Where the bundles go: an IP address (or `localhost`) and a UDP port.
    public var target: ListenAddress
    public var version = Version.v1_1
    /// Whether the fingers go out (`/tuio/2Dcur`, `/tuio2/ptr`).
    public var contacts = true
    /// Which elements go out (`/tuio/2Dobj`, `/tuio2/tok`).
    public var elements = Elements.matching([])
    /// Whether elements go out where touch prediction (`[screen] prediction`) says they will
    /// be, rather than where they are.
    public var predicted = false
    /// How the receiver tells this source from others (`source` in 1.1, `frm` in 2.0).
    public var source: String

    public init(target: ListenAddress, source: String = TUIOSettings.defaultSource) {
        self.target = target
        self.source = source
    }

    /// `motiond@HOSTNAME`, as TUIO names a source: the application, then where it runs.
    public static var defaultSource: String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "motiond" }
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return isValidSource(host) && !host.isEmpty ? "motiond@\(host)" : "motiond"
    }

    /// Printable ASCII, as OSC strings are, and short enough to repeat in every bundle.
    static func isValidSource(_ text: String) -> Bool {
        text.utf8.count <= 128 && text.utf8.allSatisfy { (0x20...0x7E).contains($0) }
    }

    /// Where `host` is a broadcast address: "every network" for 255.255.255.255, or the
    /// interface whose broadcast address it is (`eth0`); nil for an address of one host.
    /// Broadcasts are refused rather than sent with SO_BROADCAST: a receiver is one machine,
    /// and TUIO at 60 bundles a second to every machine on a network is a flood.
    static func broadcastInterface(_ host: String) -> String? {
        var target = in_addr()
        guard inet_pton(AF_INET, host, &target) == 1 else { return nil }  // IPv6 has no broadcast
        if target.s_addr == in_addr_t.max { return "every network" }
        var interfaces: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&interfaces) == 0 else { return nil }
        defer { freeifaddrs(interfaces) }
        var next = interfaces
        while let interface = next {
            next = interface.pointee.ifa_next
            guard interface.pointee.ifa_flags & UInt32(IFF_BROADCAST) != 0,
                  let address = interface.pointee.ifa_ifu.ifu_broadaddr, address.pointee.sa_family == sa_family_t(AF_INET) else { continue }
            let broadcast = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
            if broadcast == target.s_addr { return String(cString: interface.pointee.ifa_name) }
        }
        return nil
    }

    /// At most this many targets: each costs a datagram per frame.
    static let maximumTargets = 16
}

extension Configuration {
    static func readTUIO(_ table: inout TableReader, elementIDs: [String]) throws(ConfigurationError) -> TUIOSettings {
        guard let text = try table.string("target") else {
            throw table.error(nil, "[[tuio]] needs target = \"127.0.0.1:3333\" (the receiver's address and UDP port)")
        }
        var settings: TUIOSettings
        switch ListenAddress.parse(text) {
        case .success(let address) where address.port == 0:
            throw table.error("target", "'\(text)' has port 0; TUIO receivers listen on 3333 unless told otherwise")
        case .success(let address):
            if let broadcast = TUIOSettings.broadcastInterface(address.host) {
                throw table.error("target", "\(address.host) is the broadcast address of \(broadcast): motiond sends TUIO to one receiver at a time, never to every machine on a network at the frame rate (and the kernel refuses a broadcast it was not asked for); name the receiver's own address")
            }
            settings = TUIOSettings(target: address)
        case .failure:
            throw table.error("target", "'\(text)' is not ADDRESS:PORT with a numeric IP address, like \"127.0.0.1:3333\", \"192.168.1.20:3333\" or \"[::1]:3333\" (motiond does not look up host names: a kiosk would wait on DNS at every start)")
        }
        if let version = try table.string("version") {
            guard let known = TUIOSettings.Version(rawValue: version) else {
                throw table.error("version", "version is \"1.1\" or \"2.0\", not \"\(version)\"")
            }
            settings.version = known
        }
        settings.contacts = try table.bool("contacts") ?? true
        settings.elements = try elements(&table, ids: elementIDs)
        settings.predicted = try table.bool("predicted") ?? false
        if let source = try table.string("source") {
            guard !source.isEmpty, TUIOSettings.isValidSource(source) else {
                throw table.error("source", "source is up to 128 printable ASCII characters, like \"motiond@kiosk-3\"")
            }
            settings.source = source
        }
        if !settings.contacts && settings.elements.isEmpty {
            throw table.error("contacts", "this [[tuio]] would send nothing: contacts = false and no elements")
        }
        try table.finish()
        return settings
    }

    /// `elements = "*"` or a list of ids and globs; an entry without glob characters must be
    /// a configured element, so that a typo is an error rather than silence.
    private static func elements(_ table: inout TableReader, ids: [String]) throws(ConfigurationError) -> TUIOSettings.Elements {
        if let all = try? table.string("elements") {
            guard all == "*" else {
                throw table.error("elements", "elements is \"*\" (every element) or a list of element ids, like [\"card\", \"photo\"], not \"\(all)\"")
            }
            return .all
        }
        let patterns = try table.strings("elements") ?? []
        if patterns.contains("*") { return .all }
        for pattern in patterns where !pattern.contains(where: { "*?[".contains($0) }) && !ids.contains(pattern) {
            throw table.error("elements", "no element is called '\(pattern)'" + (ids.isEmpty ? " (there are no elements)" : " (the elements are: \(ids.joined(separator: ", ")))"))
        }
        return .matching(patterns)
    }
}
