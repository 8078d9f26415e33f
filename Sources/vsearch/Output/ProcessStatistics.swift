#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Resource use of this process, for the benchmark commands.
enum ProcessStatistics {
    /// Peak resident memory in KiB (Linux reports KiB, macOS bytes).
    static var maxResidentKiB: Int {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        return Int(usage.ru_maxrss) / 1024
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Int(usage.ru_maxrss)
        #endif
    }

    /// User and system CPU seconds used so far.
    static var cpuSeconds: Double {
        var usage = rusage()
        #if canImport(Darwin)
        getrusage(RUSAGE_SELF, &usage)
        #else
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #endif
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
}
