/// What a download does with a response, decided from its head alone (pure; unit-tested).
public enum DownloadDecision: Equatable, Sendable {
    /// Not the final response (1xx, or a redirect libcurl is following).
    case ignore
    /// A redirect that libcurl does not follow (the request carries secrets): transferd does.
    case redirect
    /// 206 continuing exactly at our offset: append.
    case append(total: Int64?)
    /// 2xx with the whole entity: write from byte 0 (after truncating what we had, if anything).
    case writeFromStart(validators: Validators, total: Int64?)
    /// 416 and the partial file already holds the whole entity.
    case complete
    /// The response cannot continue our bytes: forget them and start a new attempt at byte 0.
    case startOver(reason: String)
    /// An error status: the body is never written.
    case fail(TransferError)

    /// `authenticating`: the request has credentials (`--user`, a netrc file) that libcurl has
    /// not offered yet; a 401 that asks for them is then libcurl's to answer with a new request.
    public static func decide(_ head: ResponseHead, offset: Int64, resume: ResumeState,
                              followingRedirects: Bool = true, authenticating: Bool = false) -> DownloadDecision {
        switch head.status {
        case 100..<200:
            return .ignore
        case 401 where authenticating && head.fields["www-authenticate"] != nil:
            return .ignore
        case 206:
            guard let range = head.contentRange, let first = range.first else {
                return .startOver(reason: "206 without a usable Content-Range")
            }
            guard first == offset else {
                return .startOver(reason: "the server sent bytes from \(first), expected \(offset)")
            }
            if let ours = resume.validators.etag, let theirs = head.etag, ours != theirs {
                return .startOver(reason: "the ETag changed from \(ours) to \(theirs)")
            }
            return .append(total: range.total ?? resume.bytesTotal)
        case 200..<300:
            return .writeFromStart(validators: head.validators, total: head.contentLength)
        case 300..<400 where head.location != nil:
            return followingRedirects ? .ignore : .redirect
        case 416:
            let total = resume.bytesTotal ?? head.contentRange?.total
            if offset > 0, total == offset { return .complete }
            return .startOver(reason: "the server cannot serve bytes from \(offset)")
        default:
            return .fail(.httpStatus(head.status))
        }
    }
}
