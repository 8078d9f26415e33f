import Glibc

/// The standard process metrics of the Prometheus client libraries — the
/// same names and meanings as their process collector — read from Linux's
/// procfs at each scrape:
///
/// | family | from |
/// |---|---|
/// | `process_cpu_seconds_total` | `self/stat` utime + stime (fields 14, 15), in clock ticks |
/// | `process_resident_memory_bytes` | `self/stat` rss (field 24), in pages |
/// | `process_virtual_memory_bytes` | `self/stat` vsize (field 23) |
/// | `process_start_time_seconds` | `stat`'s `btime` + `self/stat` starttime (field 22) in ticks: seconds since the Unix epoch |
/// | `process_open_fds` | the entries of `self/fd` |
/// | `process_max_fds` | `self/limits`' soft "Max open files" |
///
/// Reading either gives all six or throws a ``ReadError``: a machine
/// without procfs (or with a strange one) reports no process families
/// rather than wrong ones.
struct ProcessMetrics: Sendable, Equatable {
    var cpuSeconds: Double
    var residentMemoryBytes: Int
    var virtualMemoryBytes: Int
    /// Seconds since the Unix epoch.
    var startTimeSeconds: Double
    var openFileDescriptors: Int
    var maxFileDescriptors: Int

    /// Why the process metrics could not be read.
    enum ReadError: Error, Equatable, CustomStringConvertible {
        /// A file or folder could not be opened or read (`errno`).
        case unreadable(path: String, errno: Int32)
        /// A file did not hold what procfs puts there.
        case malformed(path: String, reason: String)

        var description: String {
            switch self {
            case .unreadable(let path, let errno): "cannot read \(path): \(String(cString: strerror(errno)))"
            case .malformed(let path, let reason): "\(path) is not as procfs writes it: \(reason)"
            }
        }
    }

    /// The machine's units: bytes in a page and clock ticks in a second (`sysconf`).
    struct Units: Sendable, Equatable {
        var pageSize: Int
        var ticksPerSecond: Int

        static var current: Units {
            Units(pageSize: Int(sysconf(Int32(_SC_PAGESIZE))), ticksPerSecond: Int(sysconf(Int32(_SC_CLK_TCK))))
        }
    }

    /// Reads this process's metrics from the procfs mounted at `procfs`.
    static func read(procfs: String = "/proc", units: Units = .current) throws(ReadError) -> ProcessMetrics {
        let statPath = procfs + "/self/stat"
        let stat = try StatFields(try contents(of: statPath), path: statPath)
        let bootPath = procfs + "/stat"
        let bootTime = try bootTime(try contents(of: bootPath), path: bootPath)
        let limitsPath = procfs + "/self/limits"
        let maxFiles = try maxOpenFiles(try contents(of: limitsPath), path: limitsPath)
        let ticks = Double(units.ticksPerSecond)
        return ProcessMetrics(cpuSeconds: Double(stat.userTicks + stat.systemTicks) / ticks,
                              residentMemoryBytes: stat.residentPages * units.pageSize,
                              virtualMemoryBytes: stat.virtualBytes,
                              startTimeSeconds: Double(bootTime) + Double(stat.startTicks) / ticks,
                              openFileDescriptors: try entries(of: procfs + "/self/fd"),
                              maxFileDescriptors: maxFiles)
    }

    /// Each family with its value, in ``MetricFamily/process``'s order.
    var samples: [(family: MetricFamily, value: Double)] {
        [(.processCPU, cpuSeconds), (.processResidentMemory, Double(residentMemoryBytes)),
         (.processVirtualMemory, Double(virtualMemoryBytes)), (.processOpenFDs, Double(openFileDescriptors)),
         (.processMaxFDs, Double(maxFileDescriptors)), (.processStartTime, startTimeSeconds)]
    }

    /// The six families in the text format.
    var exposition: String {
        samples.map { $0.family.exposition($0.value) }.joined()
    }

    // MARK: - procfs files

    /// The fields of `/proc/[pid]/stat` used here (proc(5)).
    struct StatFields: Equatable {
        var userTicks: Int
        var systemTicks: Int
        var startTicks: Int
        var virtualBytes: Int
        var residentPages: Int

        /// Parses the line. The command name (field 2) is in parentheses and may hold spaces and `)`,
        /// so fields are counted from the last `)`.
        init(_ text: String, path: String) throws(ReadError) {
            guard let close = text.lastIndex(of: ")") else { throw .malformed(path: path, reason: "no ')' after the command name") }
            // After ")": field 3 (state) is at index 0, field n at index n - 3.
            let fields = text[text.index(after: close)...].split(whereSeparator: { $0 == " " || $0 == "\n" })
            func field(_ number: Int) throws(ReadError) -> Int {
                guard number - 3 < fields.count, let value = Int(fields[number - 3]), value >= 0 else {
                    throw .malformed(path: path, reason: "field \(number) is not a count")
                }
                return value
            }
            userTicks = try field(14)
            systemTicks = try field(15)
            startTicks = try field(22)
            virtualBytes = try field(23)
            residentPages = try field(24)
        }
    }

    /// `btime` of `/proc/stat`: the boot time, in seconds since the Unix epoch.
    static func bootTime(_ text: String, path: String) throws(ReadError) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            let words = line.split(separator: " ")
            if words.count == 2, let seconds = Int(words[1]), seconds > 0 { return seconds }
        }
        throw .malformed(path: path, reason: "no btime line")
    }

    /// The soft limit of `/proc/[pid]/limits`' "Max open files" line (columns: limit, soft, hard, units).
    static func maxOpenFiles(_ text: String, path: String) throws(ReadError) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix("Max open files") {
            let columns = line.dropFirst("Max open files".count).split(separator: " ")
            if let soft = columns.first.flatMap({ Int($0) }), soft > 0 { return soft }
        }
        throw .malformed(path: path, reason: "no numeric soft limit on a \"Max open files\" line")
    }

    /// A procfs file's text (procfs files report size 0, so it is read to its end).
    static func contents(of path: String) throws(ReadError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .unreadable(path: path, errno: errno) }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, errno: errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The entries of a folder, `.` and `..` left out (for `self/fd`: the descriptor that lists it included,
    /// as in the client libraries).
    static func entries(of path: String) throws(ReadError) -> Int {
        guard let directory = opendir(path) else { throw .unreadable(path: path, errno: errno) }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let isDot = withUnsafeBytes(of: entry.pointee.d_name) { name in
                name[0] == UInt8(ascii: ".") && (name[1] == 0 || (name[1] == UInt8(ascii: ".") && name[2] == 0))
            }
            if !isDot { count += 1 }
        }
        return count
    }
}
