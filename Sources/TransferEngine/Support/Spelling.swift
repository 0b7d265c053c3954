/// "Did you mean …?" for a mistyped command or option: the closest of the names a program
/// knows, by edit distance, and only when it is close. Pure. Thread: any.
public enum Spelling {
    /// The candidate closest to `word`, or nil when none is close enough to be what was meant:
    /// at most 1 edit for names of up to 4 letters, 2 for longer ones, and never for a
    /// one-letter name (`-x` for `-k` is no typo worth naming). Leading dashes are compared as
    /// letters, so `-output` finds `--output`. On a tie the earlier candidate wins.
    public static func closest(to word: String, among candidates: [String]) -> String? {
        let letters = word.drop(while: { $0 == "-" }).count
        guard letters > 1 else { return nil }
        let allowed = letters <= 4 ? 1 : 2
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != word && candidate.drop(while: { $0 == "-" }).count > 1 {
            let distance = Self.distance(word, candidate)
            if distance <= allowed, distance < best?.distance ?? .max { best = (candidate, distance) }
        }
        return best?.name
    }

    /// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`: the optimal string
    /// alignment distance, so `dowlnoad` is one swap from `download`.
    public static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        // Three rows: the one two back (for swaps), the previous one and the current one.
        var beforePrevious = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], beforePrevious[j - 2] + 1)
                }
            }
            (beforePrevious, previous, current) = (previous, current, beforePrevious)
        }
        return previous[b.count]
    }
}
