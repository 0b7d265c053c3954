/// events: the most recent ones, and with `follow` every later one on the same connection.
extension CommandService {
    func streamEvents(_ request: ControlRequest, connection: Int, reply: @escaping Reply) {
        let filter = EventFilter(jobs: request.ids.map(Set.init), batch: request.batch, types: request.types.map(Set.init))
        reply(ControlResponse(events: scheduler.events.recent.filter(filter.matches)))
        guard request.follow == true else { return }
        guard let stream = streams(connection) else { return }
        scheduler.events.subscribe(connection, stream, filter)
    }
}
