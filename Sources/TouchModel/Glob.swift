/// The one glob dialect of motiond, for stream names, device names (`[[device]] name`) and
/// TUIO element ids alike: `*` is any characters (dots included), `?` any one; nothing else
/// is special, so a device name with brackets matches itself.
///
/// Iterative, with the classic two-pointer backtracking: on a mismatch it returns to the last
/// `*` and lets it swallow one more character. Every retry starts further into the name, so
/// the work is at most pattern × name steps, whatever the pattern; no recursion, so no stack
/// to overflow. (The recursive matcher this replaces was exponential in the number of stars.)
public func globMatches(_ pattern: Substring, _ name: Substring) -> Bool {
    // What a client following everything sends, matched against every stream of a scene that
    // may hold a hundred thousand: it takes any name, without reading either.
    if !pattern.isEmpty && pattern.utf8.allSatisfy({ $0 == UInt8(ascii: "*") }) { return true }
    let pattern = Array(pattern), name = Array(name)
    var p = 0, n = 0
    // Where the last `*` was, and the name position it currently swallows up to.
    var star: Int?, starName = 0
    while n < name.count {
        if p < pattern.count, pattern[p] == "?" || (pattern[p] != "*" && pattern[p] == name[n]) {
            p += 1
            n += 1
        } else if p < pattern.count, pattern[p] == "*" {
            star = p
            starName = n
            p += 1
        } else if let star {
            p = star + 1
            starName += 1
            n = starName
        } else {
            return false
        }
    }
    while p < pattern.count, pattern[p] == "*" { p += 1 }
    return p == pattern.count
}
