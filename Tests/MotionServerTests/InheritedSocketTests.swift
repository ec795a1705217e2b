import Testing
@testable import MotionServer

@Suite("Sockets systemd passes")
struct InheritedSocketTests {
    @Test("the socket named websocket is the browsers' listener; the first other one the Unix socket")
    func names() {
        let pid: Int32 = 4242
        func sockets(_ environment: [String: String]) -> (Int32?, Int32?) {
            let found = SystemdActivation.inheritedSockets(environment, pid: pid)
            return (found.control, found.web)
        }
        #expect(sockets(["LISTEN_PID": "4242", "LISTEN_FDS": "1"]) == (3, nil))
        #expect(sockets(["LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "motiond.socket:websocket"]) == (3, 4))
        #expect(sockets(["LISTEN_PID": "4242", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "websocket:motiond.socket"]) == (4, 3))
        #expect(sockets(["LISTEN_PID": "4242", "LISTEN_FDS": "1", "LISTEN_FDNAMES": "websocket"]) == (nil, 3))
        #expect(sockets(["LISTEN_PID": "1", "LISTEN_FDS": "2"]) == (nil, nil), "for another process")
        #expect(sockets([:]) == (nil, nil))
    }
}
