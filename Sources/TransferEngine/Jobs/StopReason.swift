/// Why a transfer is stopped: typed, with the text people read.
enum StopReason: Equatable {
    case pausedByUser
    case preempted(by: JobID)
    case daemonStopped

    var text: String {
        switch self {
        case .pausedByUser: "paused by user"
        case .preempted(let high): "preempted by job \(high) (high priority)"
        case .daemonStopped: "daemon stopped"
        }
    }
}
