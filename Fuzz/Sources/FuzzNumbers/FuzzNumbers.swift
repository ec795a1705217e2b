import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzNumbers(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.numbers.libFuzzerInput(data, size)
}
