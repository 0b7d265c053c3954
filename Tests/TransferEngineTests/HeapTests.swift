import Testing
@testable import TransferEngine

@Suite struct HeapTests {
    /// Pushes everything, then pops until empty.
    private func drained<T: Comparable>(_ values: [T]) -> [T] {
        var heap = Heap<T>()
        for value in values { heap.push(value) }
        var result: [T] = []
        while let value = heap.pop() { result.append(value) }
        return result
    }

    @Test func emptyHeapHasNothing() {
        var heap = Heap<Int>()
        #expect(heap.isEmpty)
        #expect(heap.count == 0)
        #expect(heap.first == nil)
        #expect(heap.pop() == nil)
        #expect(heap.pop() == nil)
        heap.push(1)
        #expect(heap.pop() == 1)
        #expect(heap.pop() == nil)
        #expect(heap.isEmpty)
    }

    @Test(arguments: [
        [Int](),
        [1],
        [2, 1],
        [1, 2, 3, 4, 5, 6, 7, 8],
        [8, 7, 6, 5, 4, 3, 2, 1],
        [5, 3, 5, 1, 3, 5, 1, 1],
        [0, 0, 0, 0],
        [Int.max, Int.min, 0, -1, 1, Int.max, Int.min],
    ])
    func fixedInputsPopInSortedOrder(values: [Int]) {
        #expect(drained(values) == values.sorted())
    }

    @Test func randomInputsPopInSortedOrder() {
        var generator = SplitMix64(seed: 0x7472_616E_7366_6572)
        for round in 0..<200 {
            let count = Int.random(in: 0...64, using: &generator)
            // A small range makes duplicates common.
            let values = (0..<count).map { _ in Int.random(in: -20...20, using: &generator) }
            let popped = drained(values)
            guard popped == values.sorted() else {
                Issue.record("round \(round): \(values) popped as \(popped)")
                return
            }
        }
    }

    @Test func firstIsTheSmallestAndCountFollowsPushAndPop() {
        var heap = Heap<Int>()
        heap.push(5)
        #expect(heap.first == 5)
        heap.push(9)
        #expect(heap.first == 5)
        heap.push(2)
        #expect(heap.first == 2)
        heap.push(2)
        #expect(heap.count == 4)
        #expect(!heap.isEmpty)
        #expect(heap.pop() == 2)
        #expect(heap.first == 2)
        #expect(heap.pop() == 2)
        #expect(heap.first == 5)
        #expect(heap.count == 2)
    }

    @Test func interleavedPushesAndPopsMatchASortedModel() {
        var generator = SplitMix64(seed: 42)
        var heap = Heap<Int>()
        var model: [Int] = []
        for step in 0..<2000 {
            if model.isEmpty || Bool.random(using: &generator) {
                let value = Int.random(in: 0...50, using: &generator)
                heap.push(value)
                model.append(value)
                model.sort()
            } else {
                let popped = heap.pop()
                let expected = model.removeFirst()
                guard popped == expected else {
                    Issue.record("step \(step): popped \(String(describing: popped)), expected \(expected)")
                    return
                }
            }
            guard heap.first == model.first, heap.count == model.count else {
                Issue.record("step \(step): first \(String(describing: heap.first)) of \(heap.count), expected \(String(describing: model.first)) of \(model.count)")
                return
            }
        }
    }

    @Test func tuplesLikeOrderingKeepsTiesStableByTheSecondKey() {
        struct Pair: Comparable {
            var rank: Int
            var id: Int
            static func < (lhs: Pair, rhs: Pair) -> Bool { (lhs.rank, lhs.id) < (rhs.rank, rhs.id) }
        }
        let pairs = [Pair(rank: 1, id: 4), Pair(rank: 0, id: 9), Pair(rank: 1, id: 2), Pair(rank: 0, id: 3), Pair(rank: 2, id: 1)]
        #expect(drained(pairs).map(\.id) == [3, 9, 2, 4, 1])
    }
}
