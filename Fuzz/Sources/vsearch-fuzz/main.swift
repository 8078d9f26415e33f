// The program's entry point: hands over to libFuzzer's driver with the harness that
// FUZZ_TARGET selects.
//
// libFuzzer usually supplies `main` itself, but SwiftPM makes an executable target's entry point
// `main` — so this top-level code is `main`, and it calls `LLVMFuzzerRunDriver`, which parses
// libFuzzer's flags and calls `fuzzerTestOneInput` for every input.
import CFuzzerDriver

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Called by libFuzzer for every input: runs the selected harness on it. Always returns 0
/// (libFuzzer reserves other values); a finding is a crash, a sanitizer report, a leak or a hang.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTargets.selected.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

_ = FuzzTargets.selected  // resolve FUZZ_TARGET (or print the list) before libFuzzer starts
var argumentCount = CommandLine.argc
var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argumentCount, &arguments, fuzzerTestOneInput))
