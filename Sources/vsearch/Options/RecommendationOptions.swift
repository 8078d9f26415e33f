import ArgumentParser
import SearchEngine

/// `--engagement-weight` and `--popularity-weight`: how recommendations blend
/// visual similarity with the collector's events (`vsearch recommend`,
/// `vsearch product recommend`, `vsearch serve`).
struct RecommendationOptions: ParsableArguments {
    @Option(name: .customLong("engagement-weight"),
            help: ArgumentHelp("Share of a recommendation's score from co-engagement (items clicked, carted or bought after the same "
                               + "queries or in the same sessions), 0…1; 0 ignores it. Default \(RecommendationBlend().engagementWeight).",
                               valueName: "w"))
    var engagementWeight: Float?
    @Option(name: .customLong("popularity-weight"),
            help: ArgumentHelp("Share from popularity (the most engaged items), 0…1. Default \(RecommendationBlend().popularityWeight). "
                               + "Both 0: visual similarity only.", valueName: "w"))
    var popularityWeight: Float?

    /// The blend in effect.
    var blend: RecommendationBlend {
        var blend = RecommendationBlend()
        if let engagementWeight { blend.engagementWeight = engagementWeight }
        if let popularityWeight { blend.popularityWeight = popularityWeight }
        return blend
    }

    func validate() throws {
        for (flag, weight) in [("--engagement-weight", engagementWeight), ("--popularity-weight", popularityWeight)] {
            if let weight, !(0...1).contains(weight) { throw ValidationError("\(flag) \(weight) is not in 0…1") }
        }
        let blend = self.blend
        guard blend.engagementWeight + blend.popularityWeight <= 1 else {
            throw ValidationError("--engagement-weight \(blend.engagementWeight) + --popularity-weight \(blend.popularityWeight) is above 1")
        }
    }
}
