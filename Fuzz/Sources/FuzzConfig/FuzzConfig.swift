import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.config.libFuzzerInput(data, size)
}
