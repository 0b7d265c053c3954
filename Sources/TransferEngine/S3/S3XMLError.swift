/// Why an S3 answer (or a part list to send) could not be used: the document is too large or
/// not well-formed, has another root than the request's answer has, lacks a field, or holds a
/// value out of range. The engine treats it as a failed request (the server's answer is not
/// what S3 sends). Thread: a value; any.
public enum S3XMLError: Error, Equatable, Sendable {
    /// What is wrong with a document that is not well-formed (or not one transferd reads).
    public enum Malformation: String, Equatable, Sendable {
        case unterminatedTag = "an unterminated tag"
        case unterminatedComment = "an unterminated comment"
        case unterminatedDeclaration = "an unterminated declaration"
        case unterminatedCDATA = "an unterminated CDATA section"
        case mismatchedEndTag = "an end tag that closes another element"
        case unexpectedEnd = "the end of the document inside an element (or no element at all)"
        case textOutsideRoot = "text outside the root element"
        case secondRoot = "a second root element"
        case declaration = "a DTD or declaration (refused)"
        case badName = "a malformed tag name"
        case badAttribute = "a malformed attribute"
        case badEntity = "an unknown or malformed entity"
        case tooDeep = "elements nested too deeply"
    }

    case tooLarge(bytes: Int, limit: Int)
    case malformed(Malformation, offset: Int)
    /// The document is another answer than the request's (`found` is its root element).
    case unexpectedRoot(expected: String, found: String)
    /// The document is an `<Error>` where the request's answer was expected.
    case errorDocument
    /// `element` has no `field` (or an empty one).
    case missingField(String, in: String)
    /// `field` holds `text`, which is not a number in its range.
    case invalidNumber(String, field: String)
    /// `field` holds `text`, which it may not.
    case invalidValue(String, field: String)

    /// One line for the job's error.
    public var message: String {
        switch self {
        case .tooLarge(let bytes, let limit): "the S3 answer is \(bytes) bytes, more than the \(limit) read"
        case .malformed(let problem, let offset): "the S3 answer is not well-formed XML: \(problem.rawValue) at byte \(offset)"
        case .unexpectedRoot(let expected, let found): "the S3 answer is <\(Self.shown(found))>, not <\(expected)>"
        case .errorDocument: "the S3 answer is an <Error>"
        case .missingField(let field, let element): "the S3 answer's <\(element)> has no <\(field)>"
        case .invalidNumber(let text, let field): "the S3 answer's <\(field)> is '\(Self.shown(text))', not a number in range"
        case .invalidValue(let text, let field): "<\(field)> '\(Self.shown(text))' is not allowed"
        }
    }

    /// At most 40 characters of what the server sent, one line.
    private static func shown(_ text: String) -> String {
        let line = String(text.map { $0.isNewline ? " " : $0 })
        return line.count > 40 ? String(line.prefix(40)) + "…" : line
    }
}
