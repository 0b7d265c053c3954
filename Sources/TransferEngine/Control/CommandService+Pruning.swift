/// prune: deleting ended jobs.
extension CommandService {
    /// Deletes the ended jobs the request selects (`states`, `olderThan`, `batch`) and answers
    /// with how many. An unfinished state is refused (`invalid_argument`), as is an empty list.
    func prune(_ request: ControlRequest, reply: @escaping Reply) {
        var olderThan: Age?
        if let seconds = request.olderThan {
            do { olderThan = try Age(seconds: seconds) } catch {
                return reply(.failure(ControlError(.invalidArgument, error.message)))
            }
        }
        let criteria: PruneCriteria
        do {
            criteria = try PruneCriteria(states: request.states, olderThan: olderThan, batch: request.batch)
        } catch {
            return reply(.failure(ControlError(.invalidArgument, error.message)))
        }
        scheduler.prune(criteria, why: Self.description(of: criteria)) { result in
            switch result {
            case .success(let count):
                var response = ControlResponse()
                response.pruned = count
                reply(response)
            case .failure(let refusal):
                reply(Self.failure(refusal, doing: "cannot prune"))
            }
        }
    }

    /// `prune --older-than 7d --state failed`: the command as given, for the log and the event.
    private static func description(of criteria: PruneCriteria) -> String {
        var words = ["prune"]
        if let age = criteria.olderThan { words.append("--older-than \(age)") }
        if criteria.states != PruneCriteria.endedStates {
            words.append("--state " + criteria.states.map(\.rawValue).joined(separator: ","))
        }
        if let batch = criteria.batch { words.append("--batch \(batch)") }
        return words.joined(separator: " ")
    }
}
