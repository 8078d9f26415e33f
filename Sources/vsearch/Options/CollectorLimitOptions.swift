import ArgumentParser
import Foundation
import VisualSearchServer

/// `vsearch serve`'s limits on the keyless collector (`/v3/events`,
/// `/v3/__va.gif`): events a second per address and in all, event bytes per
/// address an hour, event bytes stored. Defaults are ``CollectorLimits``';
/// the README's "Running it in production" explains them.
struct CollectorLimitOptions: ParsableArguments {
    static let defaults = CollectorLimits()

    @Option(name: .customLong("collector-events-per-second"),
            help: ArgumentHelp("Events a second one address may send to the collector (its bucket holds 10 s of them, at least one "
                               + "500-event batch); a batch over it is refused whole with 429 and Retry-After (0: no limit). "
                               + "Default \(ServerLimitOptions.number(defaults.eventsPerSecondPerAddress)).", valueName: "n"))
    var eventsPerSecondPerAddress: Double?
    @Option(name: .customLong("collector-total-events-per-second"),
            help: ArgumentHelp("Events a second the collector takes from all addresses together (429 beyond; 0: no limit). "
                               + "Default \(ServerLimitOptions.number(defaults.eventsPerSecond)).", valueName: "n"))
    var eventsPerSecond: Double?
    @Option(name: .customLong("collector-address-mb-per-hour"),
            help: ArgumentHelp("MiB of events one address may have stored in an hour (a bucket refilled over the hour; 429 beyond; "
                               + "0: no limit). Default \(defaults.bytesPerAddressPerHour >> 20).", valueName: "MiB"))
    var megabytesPerAddressPerHour: Int?
    @Option(name: .customLong("collector-max-mb"),
            help: ArgumentHelp("MiB of events (their JSON) the catalog may hold; at the cap batches get 507 with Retry-After until "
                               + "events are removed (0: no cap). Default \(defaults.maxStoredBytes >> 20).", valueName: "MiB"))
    var maxStoredMegabytes: Int?

    /// The limits in effect.
    var limits: CollectorLimits {
        var limits = CollectorLimits()
        if let eventsPerSecondPerAddress { limits.eventsPerSecondPerAddress = eventsPerSecondPerAddress }
        if let eventsPerSecond { limits.eventsPerSecond = eventsPerSecond }
        if let megabytesPerAddressPerHour { limits.bytesPerAddressPerHour = megabytesPerAddressPerHour << 20 }
        if let maxStoredMegabytes { limits.maxStoredBytes = maxStoredMegabytes << 20 }
        return limits
    }

    func validate() throws {
        for (flag, value) in [("--collector-events-per-second", eventsPerSecondPerAddress), ("--collector-total-events-per-second", eventsPerSecond)] {
            if let value, !(value >= 0 && value.isFinite) { throw ValidationError("\(flag) must be 0 (no limit) or positive") }
        }
        for (flag, value) in [("--collector-address-mb-per-hour", megabytesPerAddressPerHour), ("--collector-max-mb", maxStoredMegabytes)] {
            if let value, !(0...(1 << 30)).contains(value) { throw ValidationError("\(flag) must be 0 (no limit) or a number of MiB") }
        }
    }
}
