/// The columns of a `watch` line for a terminal width: which fit, and how wide the name and
/// the bar are. Every other column has a fixed width, so numbers changing never shift the
/// line. As the width shrinks, the bar goes first, then the bytes, then the state: at 60
/// columns a line still has the name, percent, rate and ETA. Piped (no width), every column
/// is shown and the name is never cut. Pure; unit-tested.
struct BoardLayout: Equatable {
    /// nil: the whole name.
    var nameWidth: Int?
    /// 0: no bar. Counted with its brackets.
    var barWidth: Int
    var showsBytes: Bool
    var showsState: Bool

    static let percentWidth = 6    // "100.0%"
    static let bytesWidth = 23     // "1023.9 MiB / 1023.9 GiB"
    static let rateWidth = 12      // "1023.9 KiB/s"
    static let timeWidth = 10      // "ETA 59m59s", "took 1h05m"
    static let stateWidth = 9      // "completed"
    static let separator = 2
    static let minimumName = 12
    static let minimumBar = 12
    static let widestName = 32

    static func fitting(width: Int?) -> BoardLayout {
        guard let width else { return BoardLayout(nameWidth: nil, barWidth: 22, showsBytes: true, showsState: true) }
        let choices: [(bar: Bool, bytes: Bool, state: Bool)] = [(true, true, true), (false, true, true), (false, false, true),
                                                                (false, false, false)]
        for choice in choices {
            var fixed = percentWidth + rateWidth + timeWidth + 3 * separator
            if choice.bytes { fixed += bytesWidth + separator }
            if choice.state { fixed += stateWidth + separator }
            let room = width - fixed
            if choice.bar {
                guard room - separator >= minimumName + minimumBar else { continue }
                let name = min(widestName, room - separator - minimumBar)
                return BoardLayout(nameWidth: name, barWidth: room - separator - name, showsBytes: true, showsState: true)
            }
            guard room >= minimumName else { continue }
            return BoardLayout(nameWidth: min(room, 2 * widestName), barWidth: 0, showsBytes: choice.bytes, showsState: choice.state)
        }
        return BoardLayout(nameWidth: max(4, width - percentWidth - rateWidth - timeWidth - 3 * separator), barWidth: 0,
                           showsBytes: false, showsState: false)
    }
}
