/// What a command did: the jobs it changed (as they are once it is recorded), those already
/// where it would move them, and, in the order they came, why the others were not changed.
struct CommandOutcome {
    var changed: [Job]
    var unchanged: [Job] = []
    var refusals: [CommandRefusal]
}
