/// Per-channel counts of 8-bit RGB values, for a median colour (of a line,
/// of an image's outermost pixels) that one odd pixel cannot pull.
struct ColorHistogram {
    private var counts = [Int](repeating: 0, count: 768)
    /// Pixels added.
    private(set) var total = 0

    mutating func add(_ red: UInt8, _ green: UInt8, _ blue: UInt8) {
        counts[Int(red)] += 1
        counts[256 + Int(green)] += 1
        counts[512 + Int(blue)] += 1
        total += 1
    }

    /// Each channel's median (the lower one of an even count); black when empty.
    var median: (red: Int, green: Int, blue: Int) {
        (channelMedian(0), channelMedian(256), channelMedian(512))
    }

    private func channelMedian(_ base: Int) -> Int {
        var seen = 0
        for value in 0..<256 {
            seen += counts[base + value]
            if seen * 2 >= total { return value }
        }
        return 255
    }
}
