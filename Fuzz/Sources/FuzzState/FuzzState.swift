import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzState(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.state.libFuzzerInput(data, size)
}
