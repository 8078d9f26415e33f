import ImageOps

/// A picture-sized yes/no map (foreground pixels, a window's colours) and
/// the few operations detection does on one: growing by a square, a 3×3
/// closing, and 8-connected components with their boxes.
struct BinaryMask: Sendable, Equatable {
    let width: Int
    let height: Int
    var bits: [Bool]

    init(width: Int, height: Int, bits: [Bool]) {
        precondition(bits.count == width * height, "\(bits.count) bits for \(width)×\(height)")
        self.width = width
        self.height = height
        self.bits = bits
    }

    init(width: Int, height: Int) {
        self.init(width: width, height: height, bits: [Bool](repeating: false, count: width * height))
    }

    subscript(x: Int, y: Int) -> Bool {
        get { bits[y * width + x] }
        set { bits[y * width + x] = newValue }
    }

    /// Every set pixel grown to the square of side `2 × radius + 1` around it (running counts, rows then columns).
    func dilated(by radius: Int) -> BinaryMask {
        guard radius > 0 else { return self }
        var rows = [Bool](repeating: false, count: bits.count)
        for y in 0..<height {
            let base = y * width
            var count = 0
            for x in 0..<min(width, radius) where bits[base + x] { count += 1 }
            for x in 0..<width {
                if x + radius < width, bits[base + x + radius] { count += 1 }
                if x - radius - 1 >= 0, bits[base + x - radius - 1] { count -= 1 }
                rows[base + x] = count > 0
            }
        }
        var out = [Bool](repeating: false, count: bits.count)
        for x in 0..<width {
            var count = 0
            for y in 0..<min(height, radius) where rows[y * width + x] { count += 1 }
            for y in 0..<height {
                if y + radius < height, rows[(y + radius) * width + x] { count += 1 }
                if y - radius - 1 >= 0, rows[(y - radius - 1) * width + x] { count -= 1 }
                out[y * width + x] = count > 0
            }
        }
        return BinaryMask(width: width, height: height, bits: out)
    }

    /// A pixel stays when its whole 3×3 square is set, the outside counting as unset.
    func eroded3x3() -> BinaryMask {
        var out = BinaryMask(width: width, height: height)
        guard width >= 3, height >= 3 else { return out }
        for y in 1..<(height - 1) {
            for x in 1..<(width - 1) where bits[y * width + x] {
                var all = true
                for dy in -1...1 where all { for dx in -1...1 where !bits[(y + dy) * width + x + dx] { all = false; break } }
                out.bits[y * width + x] = all
            }
        }
        return out
    }

    /// Dilation by a 3×3 square, then erosion (outside unset): gaps of a pixel closed.
    func closed3x3() -> BinaryMask { dilated(by: 1).eroded3x3() }

    /// One 8-connected group of set pixels.
    struct Component: Sendable, Equatable {
        /// The box of the pixels counted (`counted` in ``components(counting:)``), right and bottom exclusive.
        var minX: Int, minY: Int, maxX: Int, maxY: Int
        /// Pixels counted.
        var count: Int
        var width: Int { maxX - minX }
        var height: Int { maxY - minY }
    }

    /// The 8-connected components of this mask, in the order their first
    /// pixel comes (row after row), each with the box and the count of its
    /// pixels that are set in `counted` (this mask itself when nil); those
    /// with no counted pixel are left out. `labels`, when given, receives each pixel's component index + 1 (0: none).
    func components(counting counted: BinaryMask? = nil, labels: UnsafeMutableBufferPointer<Int32>? = nil) -> [Component] {
        var label = [Int32](repeating: 0, count: bits.count)
        var stack: [Int] = []
        var found: [Component] = []
        var indexOfLabel: [Int32: Int] = [:]
        var next: Int32 = 0
        for start in bits.indices where bits[start] && label[start] == 0 {
            next += 1
            label[start] = next
            stack.append(start)
            var component = Component(minX: width, minY: height, maxX: 0, maxY: 0, count: 0)
            while let index = stack.popLast() {
                let x = index % width, y = index / width
                if counted?.bits[index] ?? true {
                    component.count += 1
                    component.minX = min(component.minX, x); component.maxX = max(component.maxX, x + 1)
                    component.minY = min(component.minY, y); component.maxY = max(component.maxY, y + 1)
                }
                for ny in max(0, y - 1)...min(height - 1, y + 1) {
                    for nx in max(0, x - 1)...min(width - 1, x + 1) {
                        let neighbour = ny * width + nx
                        if bits[neighbour] && label[neighbour] == 0 {
                            label[neighbour] = next
                            stack.append(neighbour)
                        }
                    }
                }
            }
            if component.count > 0 {
                indexOfLabel[next] = found.count
                found.append(component)
            }
        }
        if let labels {
            for index in bits.indices {
                labels[index] = label[index] == 0 ? 0 : Int32((indexOfLabel[label[index]] ?? -1) + 1)
            }
        }
        return found
    }
}
