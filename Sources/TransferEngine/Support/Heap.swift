/// A binary min-heap: `push` and `pop` in O(log n), `first` in O(1). Thread: a value; any.
struct Heap<Element: Comparable> {
    private var storage: [Element] = []

    var isEmpty: Bool { storage.isEmpty }
    var count: Int { storage.count }
    /// The smallest element.
    var first: Element? { storage.first }

    mutating func push(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard storage[child] < storage[parent] else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    /// Removes and returns the smallest element.
    @discardableResult
    mutating func pop() -> Element? {
        guard !storage.isEmpty else { return nil }
        storage.swapAt(0, storage.count - 1)
        let smallest = storage.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var least = parent
            if left < storage.count, storage[left] < storage[least] { least = left }
            if right < storage.count, storage[right] < storage[least] { least = right }
            guard least != parent else { break }
            storage.swapAt(parent, least)
            parent = least
        }
        return smallest
    }
}
