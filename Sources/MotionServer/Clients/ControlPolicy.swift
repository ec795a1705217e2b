import Glibc
import MotionConfiguration
import MotionDaemon

/// Which peers may use the control operations: root, motiond's own user, and members of
/// `[daemon] control_groups` (docs/protocol.md, Access).
struct ControlPolicy {
    let daemonUID: uid_t
    let groups: Set<gid_t>
    /// Every group a user is in, by uid and primary group; nil when the user is unknown.
    let groupsOfUser: (uid_t, gid_t) -> [gid_t]?

    init(_ settings: DaemonSettings) {
        self.init(daemonUID: getuid(), groups: Set(settings.controlGroups.compactMap { getgrnam($0)?.pointee.gr_gid }),
                  groupsOfUser: Self.systemGroups)
    }

    /// A policy with its facts given, for tests.
    init(daemonUID: uid_t, groups: Set<gid_t>, groupsOfUser: @escaping (uid_t, gid_t) -> [gid_t]?) {
        self.daemonUID = daemonUID
        self.groups = groups
        self.groupsOfUser = groupsOfUser
    }

    func allows(_ peer: PeerCredentials?) -> Bool {
        guard let peer else { return false }
        if peer.uid == 0 || peer.uid == daemonUID { return true }
        if groups.contains(peer.gid) { return true }
        guard !groups.isEmpty, let list = groupsOfUser(peer.uid, peer.gid) else { return false }
        return list.contains { groups.contains($0) }
    }

    /// The user's groups from the system's databases (`getgrouplist`), however many: when
    /// the first guess is too small, asked again with the size it says it needs.
    static func systemGroups(uid: uid_t, primary: gid_t) -> [gid_t]? {
        guard let user = getpwuid(uid) else { return nil }
        let name = String(cString: user.pointee.pw_name)
        return groupList { list, count in getgrouplist(name, primary, list, count) }
    }

    /// Calls `getgrouplist`-shaped `call` until the list fits: it returns -1 and sets the
    /// count to the size needed when the buffer is too small.
    static func groupList(_ call: (UnsafeMutablePointer<gid_t>, UnsafeMutablePointer<Int32>) -> Int32) -> [gid_t]? {
        var capacity: Int32 = 64
        // The count needed can grow between calls (a group added): try a few times.
        for _ in 0..<8 {
            var count = capacity
            var list = [gid_t](repeating: 0, count: Int(capacity))
            if call(&list, &count) >= 0 { return Array(list.prefix(Int(count))) }
            guard count > capacity else { capacity *= 2; continue }
            capacity = count
        }
        return nil
    }
}
