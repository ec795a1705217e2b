import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.http.libFuzzerInput(data, size)
}
