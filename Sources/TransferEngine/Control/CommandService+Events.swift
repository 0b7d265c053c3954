/// events: the most recent ones, and with `follow` every later one on the same connection.
extension CommandService {
    func streamEvents(_ request: ControlRequest, connection: Int, reply: @escaping Reply) {
        reply(ControlResponse(events: scheduler.events.recent))
        guard request.follow == true else { return }
        guard let stream = streams(connection) else { return }
        scheduler.events.subscribe(connection, stream)
    }
}
