import Foundation
import TestSupport
import Testing
@testable import VisualSearchServer

/// The standard process metrics come from procfs as the Prometheus client
/// libraries read them: CPU and start time in clock ticks, resident memory in
/// pages, open descriptors as the entries of `self/fd`, the soft limit of
/// `self/limits`. A procfs that is missing or strange is a typed error —
/// never a crash, never a made-up number.
@Suite("Process metrics from procfs")
struct ProcessMetricsTests {
    /// A fake procfs in a temporary folder: `self/stat`, `stat`, `self/limits` and `descriptors` entries in `self/fd`.
    static func procfs(stat: String, bootStat: String = "cpu  1 2 3 4\nbtime 1764000000\nprocesses 5\n",
                       limits: String = "Limit                     Soft Limit           Hard Limit           Units     \n"
                           + "Max cpu time              unlimited            unlimited            seconds   \n"
                           + "Max open files            1024                 524288               files     \n",
                       descriptors: Int = 5) throws -> String {
        let root = Repository.temporaryDirectory("procfs")
        try FileManager.default.createDirectory(atPath: root + "/self/fd", withIntermediateDirectories: true)
        try stat.write(toFile: root + "/self/stat", atomically: true, encoding: .utf8)
        try bootStat.write(toFile: root + "/stat", atomically: true, encoding: .utf8)
        try limits.write(toFile: root + "/self/limits", atomically: true, encoding: .utf8)
        for descriptor in 0..<descriptors {
            FileManager.default.createFile(atPath: root + "/self/fd/\(descriptor)", contents: nil)
        }
        return root
    }

    /// A `/proc/self/stat` line whose command name holds spaces and parentheses; utime 250, stime 150 ticks,
    /// starttime 12345 ticks, vsize 2 GiB, rss 1000 pages.
    static let stat = "4242 (vsearch (serve) x) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 150 0 0 20 0 9 0 12345 2147483648 1000 "
        + "18446744073709551615 1 1 0 0 0 0 0 4096 17663 0 0 0 17 1 0 0 0 0 0\n"
    static let units = ProcessMetrics.Units(pageSize: 4096, ticksPerSecond: 100)

    @Test("a procfs tree: CPU and start time from ticks, RSS from pages, fds counted, the soft limit")
    func fakeProcfs() throws {
        let root = try Self.procfs(stat: Self.stat)
        let metrics = try ProcessMetrics.read(procfs: root, units: Self.units)
        #expect(metrics == ProcessMetrics(cpuSeconds: 4.0, residentMemoryBytes: 4_096_000, virtualMemoryBytes: 2_147_483_648,
                                          startTimeSeconds: 1_764_000_123.45, openFileDescriptors: 5, maxFileDescriptors: 1024))
        #expect(metrics.exposition == """
            # HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
            # TYPE process_cpu_seconds_total counter
            process_cpu_seconds_total 4
            # HELP process_resident_memory_bytes Resident memory size in bytes.
            # TYPE process_resident_memory_bytes gauge
            process_resident_memory_bytes 4096000
            # HELP process_virtual_memory_bytes Virtual memory size in bytes.
            # TYPE process_virtual_memory_bytes gauge
            process_virtual_memory_bytes 2147483648
            # HELP process_open_fds Number of open file descriptors.
            # TYPE process_open_fds gauge
            process_open_fds 5
            # HELP process_max_fds Maximum number of open file descriptors.
            # TYPE process_max_fds gauge
            process_max_fds 1024
            # HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
            # TYPE process_start_time_seconds gauge
            process_start_time_seconds 1764000123.45

            """)
    }

    @Test("a missing procfs is an unreadable error naming the file")
    func missingProcfs() {
        let root = Repository.temporaryDirectory("no-procfs") + "/proc"
        #expect(throws: ProcessMetrics.ReadError.unreadable(path: root + "/self/stat", errno: ENOENT)) {
            try ProcessMetrics.read(procfs: root, units: Self.units)
        }
    }

    @Test("malformed files are errors naming the file", arguments: [
        ("stat", "4242 vsearch S 1 2 3\n"),
        ("stat", "4242 (vsearch) S 1 4242\n"),
        ("stat", Self.stat.replacingOccurrences(of: " 250 150 ", with: " 250 -150 ")),
        ("boot", "cpu  1 2 3 4\nprocesses 5\n"),
        ("limits", "Limit   Soft Limit   Hard Limit   Units\nMax open files   unlimited   unlimited   files\n"),
    ])
    func malformed(file: String, text: String) throws {
        let root = try Self.procfs(stat: file == "stat" ? text : Self.stat,
                                   bootStat: file == "boot" ? text : "btime 1764000000\n",
                                   limits: file == "limits" ? text : "Max open files 1024 4096 files\n")
        let path = root + ["stat": "/self/stat", "boot": "/stat", "limits": "/self/limits"][file]!
        do {
            let metrics = try ProcessMetrics.read(procfs: root, units: Self.units)
            Issue.record("read \(metrics) from a malformed \(path)")
        } catch {
            guard case .malformed(let named, _) = error else {
                Issue.record("\(error) is not a malformed-file error")
                return
            }
            #expect(named == path)
        }
    }

    @Test("this process, from /proc: RSS > 0, started within the last day, at least stdin, stdout and stderr open")
    func thisProcess() throws {
        let metrics = try ProcessMetrics.read()
        let now = Date().timeIntervalSince1970
        #expect(metrics.residentMemoryBytes > 1_000_000)
        #expect(metrics.virtualMemoryBytes >= metrics.residentMemoryBytes)
        #expect(metrics.startTimeSeconds > now - 86_400 && metrics.startTimeSeconds <= now + 1, "\(metrics.startTimeSeconds) vs now \(now)")
        #expect(metrics.openFileDescriptors >= 3 && metrics.openFileDescriptors <= metrics.maxFileDescriptors)
        #expect(metrics.cpuSeconds > 0)
        var limit = rlimit()
        #expect(getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0)
        #expect(metrics.maxFileDescriptors == Int(limit.rlim_cur), "self/limits' soft limit is getrlimit's")

        // One more descriptor open is one more counted (no other test opens files in this instant… mostly: compare loosely).
        let before = try ProcessMetrics.read().openFileDescriptors
        let extra = (0..<20).map { _ in open("/dev/null", O_RDONLY) }
        defer { extra.forEach { close($0) } }
        let after = try ProcessMetrics.read().openFileDescriptors
        #expect(after - before >= 15, "20 more open: \(before) → \(after)")
    }
}
