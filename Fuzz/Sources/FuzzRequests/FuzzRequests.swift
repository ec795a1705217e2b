import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRequests(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.requests.libFuzzerInput(data, size)
}
