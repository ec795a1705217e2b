import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWebSocket(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.websocket.libFuzzerInput(data, size)
}
