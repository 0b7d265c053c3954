/// A command waiting for its change to be recorded: answered with `acknowledge`.
struct CommandAck: Equatable {
    var token: Int
    var command: JobCommand
}
