/// The control protocol's side of the daemon: checks a request (its version, its numbers),
/// turns its command into the scheduler's operations, and their typed results into replies.
/// Only here do requests, replies and `ControlError`s meet the scheduler, which decides without
/// speaking the wire. Thread: the loop thread.
final class CommandService {
    typealias Reply = (ControlResponse) -> Void

    let scheduler: Scheduler
    /// Set by the daemon: the control connection to stream events to.
    var streams: (Int) -> ControlServer.Stream? = { _ in nil }

    init(scheduler: Scheduler) {
        self.scheduler = scheduler
    }

    /// Answers `request` through `reply`, once (a pending `wait` may answer much later, or never
    /// when its connection closes first).
    func handle(_ request: ControlRequest, from origin: ControlServer.Origin, reply: @escaping Reply) {
        scheduler.loop.assertOnLoopThread()
        guard request.version == ControlRequest.protocolVersion else {
            return reply(.failure(ControlError(.unsupportedVersion,
                "protocol version \(request.version) is not supported; this daemon speaks \(ControlRequest.protocolVersion)")))
        }
        do { try request.checkNumbers() } catch { return reply(.failure(ControlError(.invalidArgument, error.message))) }
        let connection = origin.connection
        switch request.command {
        case .add: add(request.job, reply: reply)
        case .list: list(request, reply: reply)
        case .show: show(request, reply: reply)
        case .pause: act(.pause, request, reply: reply)
        case .resume: act(.resume, request, reply: reply)
        case .cancel: act(.cancel, request, reply: reply)
        case .retry: act(.retry, request, reply: reply)
        case .wait: wait(request, connection: connection, reply: reply)
        case .stats: stats(reply: reply)
        case .resumeData: resumeData(request, reply: reply)
        case .submit: submit(request.submission, from: origin, reply: reply)
        case .batchList: batchList(reply: reply)
        case .batchShow: batchShow(request, reply: reply)
        case .backupPlan: backupPlan(request.submission, reply: reply)
        case .limit: limit(request, reply: reply)
        case .modify: modify(request, reply: reply)
        case .events: streamEvents(request, connection: connection, reply: reply)
        case .prune: prune(request, reply: reply)
        }
    }

    /// The client went away: forget its manifest chunks, its event stream and its waits.
    func connectionClosed(_ connection: Int) {
        scheduler.loop.assertOnLoopThread()
        scheduler.dropSubmissions(of: connection)
        scheduler.events.unsubscribe(connection)
        scheduler.stopWaiting(owner: connection)
    }

    /// The reply to an operation that failed for `refusal`; `doing` names what failed when the
    /// store did (the reply then says what could not be read or recorded).
    static func failure(_ refusal: CommandRefusal, doing: @autoclosure () -> String) -> ControlResponse {
        .failure(ControlError(refusal, doing: doing()))
    }
}
