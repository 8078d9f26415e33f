/// Collected events over time: counts per action in fixed buckets, for a plot.
///
/// A bucket starts at a multiple of ``bucketSeconds`` since the Unix epoch
/// (UTC) and counts the events whose timestamp (`ts`, or the time received
/// when the event had none) falls in it. Buckets without events are left out.
public struct EventTimeline: Sendable, Hashable, Codable {
    /// One bucket's counts.
    public struct Bucket: Sendable, Hashable, Codable {
        /// The bucket's start, milliseconds since the epoch.
        public var start: Int64
        /// Events per action in the bucket.
        public var counts: [String: Int]

        public init(start: Int64, counts: [String: Int]) {
            self.start = start
            self.counts = counts
        }
    }

    /// The width of a bucket.
    public var bucketSeconds: Int
    /// Buckets holding events, oldest first.
    public var buckets: [Bucket]

    public init(bucketSeconds: Int, buckets: [Bucket]) {
        self.bucketSeconds = bucketSeconds
        self.buckets = buckets
    }

    /// Buckets from `(start ms, action, count)` rows in any order.
    public init(bucketSeconds: Int, rows: [(start: Int64, action: String, count: Int)]) {
        var byStart: [Int64: [String: Int]] = [:]
        for row in rows { byStart[row.start, default: [:]][row.action, default: 0] += row.count }
        self.init(bucketSeconds: bucketSeconds, buckets: byStart.keys.sorted().map { Bucket(start: $0, counts: byStart[$0]!) })
    }

    enum CodingKeys: String, CodingKey {
        case bucketSeconds = "bucket_seconds", buckets
    }
}
