/// What a command did: the jobs it changed (as they are once it is recorded) and, in the order
/// they came, why the others were not.
struct CommandOutcome {
    var changed: [Job]
    var refusals: [CommandRefusal]
}
