import Synchronization
import TOMLKit

/// TOML text read into settings, through TOMLKit, remembering the last few texts read.
///
/// TOMLKit 0.6 never frees a document it parsed (`TOMLTable` has no `deinit`), and copies
/// every key and string it hands out with `strdup` without freeing it: about 22 KB of the
/// example configuration stayed behind at each reload. What can be given back is: the
/// document's nodes, cleared once read. What cannot (the empty table, the copied keys and
/// strings) is not asked for twice: a reload that finds the same text as before, the usual
/// SIGHUP, reuses what was read then and calls TOMLKit not at all.
enum ParsedTOML {
    /// Texts read lately and their settings; a few, for a main file and its drop-ins.
    private static let recent = Mutex<[(text: String, table: SettingsTable)]>([])
    private static let remembered = 16

    /// The settings in `text`, or TOMLKit's error.
    ///
    /// A text is the same as one read before only byte for byte: `==` on strings is canonical
    /// equivalence, under which a file that spells an id `cafe` and U+0301 equals one that
    /// spells it with é, and the settings of the one read first would come back for the other.
    static func table(_ text: String) throws -> SettingsTable {
        if let known = recent.withLock({ $0.first { Self.same($0.text, text) }?.table }) { return known }
        let document = try TOMLTable(string: text)
        let table = SettingsValue.table(document)
        document.clear()  // frees the nodes; the table itself TOMLKit keeps
        recent.withLock { recent in
            recent.removeAll { Self.same($0.text, text) }
            recent.append((text, table))
            if recent.count > remembered { recent.removeFirst() }
        }
        return table
    }

    private static func same(_ a: String, _ b: String) -> Bool { a.utf8.elementsEqual(b.utf8) }
}
