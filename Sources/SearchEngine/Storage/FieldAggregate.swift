/// A facet's raw aggregate as a store computes it; ``FacetShaper`` turns it
/// into the API's ``Facet``.
public enum FieldAggregate: Sendable, Hashable {
    /// The most frequent values of a string or text field, by descending count then value.
    case values(field: String, counts: [(value: String, count: Int)])
    /// The bounds of a numeric field; nil when no image has a value.
    case range(field: String, min: Double?, max: Double?)

    public static func == (lhs: FieldAggregate, rhs: FieldAggregate) -> Bool {
        switch (lhs, rhs) {
        case let (.values(a, x), .values(b, y)): a == b && x.map(\.value) == y.map(\.value) && x.map(\.count) == y.map(\.count)
        case let (.range(a, x1, x2), .range(b, y1, y2)): a == b && x1 == y1 && x2 == y2
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        switch self {
        case .values(let field, let counts):
            hasher.combine(field)
            for entry in counts { hasher.combine(entry.value); hasher.combine(entry.count) }
        case .range(let field, let low, let high):
            hasher.combine(field); hasher.combine(low); hasher.combine(high)
        }
    }
}
