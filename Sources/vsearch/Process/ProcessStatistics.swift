#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Resource use of this process, for the benchmark commands.
enum ProcessStatistics {
    /// Peak resident memory in KiB (Linux reports KiB, macOS bytes).
    static var maxResidentKiB: Int {
        #if canImport(Darwin)
        return Int(usage.ru_maxrss) / 1024
        #else
        return Int(usage.ru_maxrss)
        #endif
    }

    /// User and system CPU seconds used so far.
    static var cpuSeconds: Double {
        let current = usage
        return Double(current.ru_utime.tv_sec + current.ru_stime.tv_sec) + Double(current.ru_utime.tv_usec + current.ru_stime.tv_usec) / 1e6
    }

    private static var usage: rusage {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #endif
        return usage
    }
}
