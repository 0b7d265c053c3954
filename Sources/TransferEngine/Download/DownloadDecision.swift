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
            // The same entity with another length, or a body that is not the range it names: the
            // answer contradicts itself, and appending it could complete the file at a wrong size.
            if let known = resume.bytesTotal, let total = range.total, known != total {
                return .startOver(reason: "the server's answer contradicts itself: the entity was \(known) bytes, "
                    + "its Content-Range now says \(total)")
            }
            if let last = range.last, let length = head.contentLength, !head.isContentEncoded, length != last - first + 1 {
                return .startOver(reason: "the server's answer contradicts itself: Content-Range bytes \(first)-\(last) "
                    + "with Content-Length \(length)")
            }
            return .append(total: range.total ?? resume.bytesTotal)
        case 200..<300:
            // A whole entity carries no Content-Range, or one that names all of it (rclone serve s3
            // answers a range with 200 and the range's bytes: a tail taken for the whole).
            if let range = head.contentRange, !range.coversWhole(length: head.isContentEncoded ? nil : head.contentLength) {
                return .startOver(reason: "the server's answer contradicts itself: HTTP \(head.status) (the whole entity) "
                    + "with Content-Range \(range.description)")
            }
            if offset > 0, let ours = resume.validators.etag, ours == head.etag, !ours.hasPrefix("W/"),
               let known = resume.bytesTotal, let length = head.contentLength, !head.isContentEncoded, length != known {
                return .startOver(reason: "the server's answer contradicts itself: the entity \(ours) was \(known) bytes, "
                    + "now \(length)")
            }
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
