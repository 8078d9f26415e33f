/// The best `capacity` (row, value) pairs seen so far: a min-heap whose
/// root is the worst kept entry, so a scan of n candidates costs O(n log k).
/// Equal values rank by ascending name, so results are deterministic.
struct BoundedHeap {
    let capacity: Int
    let names: [String]
    var items: [(row: Int, value: Float)] = []

    init(capacity: Int, names: [String]) {
        self.capacity = capacity
        self.names = names
        items.reserveCapacity(min(capacity, 4096))
    }

    /// Whether a ranks below b (lower value; equal values: later name).
    func worse(_ a: (row: Int, value: Float), _ b: (row: Int, value: Float)) -> Bool {
        a.value != b.value ? a.value < b.value : names[a.row] > names[b.row]
    }

    mutating func insert(row: Int, value: Float) {
        let item = (row: row, value: value)
        if items.count < capacity {
            items.append(item)
            var child = items.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard worse(items[child], items[parent]) else { break }
                items.swapAt(child, parent)
                child = parent
            }
        } else if capacity > 0, value >= items[0].value, worse(items[0], item) {  // most candidates stop at the first test
            items[0] = item
            var parent = 0
            while true {
                let left = 2 * parent + 1, right = left + 1
                var smallest = parent
                if left < items.count && worse(items[left], items[smallest]) { smallest = left }
                if right < items.count && worse(items[right], items[smallest]) { smallest = right }
                if smallest == parent { break }
                items.swapAt(parent, smallest)
                parent = smallest
            }
        }
    }

    func sortedDescending() -> [(row: Int, value: Float)] {
        items.sorted { worse($1, $0) }
    }
}
