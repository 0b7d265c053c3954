/// How an attempt ended, as the scheduler sees it.
public enum AttemptOutcome: Equatable, Sendable {
    /// Every byte of the entity is in the partial file.
    case completed
    case failed(TransferError)
    /// The bytes we had cannot be continued: forget them and try again from byte 0.
    case startOver(reason: String)
    /// The response redirects to `url`, which the attempt goes on to in another request
    /// (`RedirectGuard`): libcurl was not trusted to follow it with the request's secrets.
    case redirect(to: String)

    var failure: TransferError? {
        if case .failed(let error) = self { error } else { nil }
    }
}
