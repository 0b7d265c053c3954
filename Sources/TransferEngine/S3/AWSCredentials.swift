/// An AWS access key: its id, its secret and, for temporary credentials, a session token.
/// The secret and the token never print: `description`, `debugDescription` and the mirror
/// (`dump`, string interpolation of a value holding one) show `<redacted>`. Never stored:
/// resolved again for each attempt (`AWSCredentialSource`). Thread: a value; any.
public struct AWSCredentials: Equatable, Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable {
    public var accessKeyId: String
    public var secretAccessKey: String
    public var sessionToken: String?

    public init(accessKeyId: String, secretAccessKey: String, sessionToken: String? = nil) {
        self.accessKeyId = accessKeyId
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
    }

    public var description: String {
        "AWSCredentials(accessKeyId: \(accessKeyId), secretAccessKey: \(Redaction.marker), sessionToken: "
            + (sessionToken == nil ? "nil" : Redaction.marker) + ")"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["accessKeyId": accessKeyId, "secretAccessKey": Redaction.marker,
                                "sessionToken": sessionToken == nil ? "nil" : Redaction.marker])
    }
}
