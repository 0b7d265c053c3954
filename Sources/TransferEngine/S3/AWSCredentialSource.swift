#if canImport(Glibc)
import Glibc
#endif

/// Finds AWS credentials and the region the way the AWS CLI does, from an environment and
/// files given to it (the daemon's, or a test's):
///
/// - credentials: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+ `AWS_SESSION_TOKEN`) when
///   both are set and no profile was asked for explicitly (botocore: an explicit profile
///   outweighs the environment's keys; `AWS_PROFILE` does not); else the profile's
///   `aws_access_key_id`, `aws_secret_access_key`, `aws_session_token` in the shared
///   credentials file (`AWS_SHARED_CREDENTIALS_FILE`, else `$HOME/.aws/credentials`,
///   sections `[NAME]`), else in the config file (`AWS_CONFIG_FILE`, else
///   `$HOME/.aws/config`, sections `[default]` and `[profile NAME]`);
/// - the profile: the explicit one, else `AWS_PROFILE`, else `default`;
/// - the region: the explicit one, else `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile's
///   `region` in the config file, else `us-east-1`.
///
/// Errors name the profile and the files looked at, never a secret. Pure but for `readFile`.
/// Thread: a value; any (blocks on `readFile`).
public struct AWSCredentialSource: Sendable {
    /// What was found, and where.
    public struct Resolution: Equatable, Sendable {
        public var credentials: AWSCredentials
        public var region: String
        /// The profile the files were read for (also when the keys came from the environment).
        public var profile: String
        /// Where the keys came from, for messages: `the environment (AWS_ACCESS_KEY_ID)` or
        /// `profile 'p' in /home/u/.aws/credentials`.
        public var origin: String
    }

    public static let defaultRegion = "us-east-1"

    public var environment: [String: String]
    /// A file's text, or nil when it is missing or unreadable.
    public var readFile: @Sendable (String) -> String?

    public init(environment: [String: String], readFile: @escaping @Sendable (String) -> String? = AWSCredentialSource.readTextFile) {
        self.environment = environment
        self.readFile = readFile
    }

    /// The credentials and region for `profile` (nil: `AWS_PROFILE`, else `default`) and
    /// `region` (nil: from the environment or config file).
    public func resolve(profile explicitProfile: String? = nil, region explicitRegion: String? = nil)
        throws(AWSCredentialError) -> Resolution {
        let profile = explicitProfile ?? value("AWS_PROFILE") ?? "default"
        let credentialsPath = value("AWS_SHARED_CREDENTIALS_FILE") ?? value("HOME").map { $0 + "/.aws/credentials" }
        let configPath = value("AWS_CONFIG_FILE") ?? value("HOME").map { $0 + "/.aws/config" }
        let credentialsFile = credentialsPath.flatMap(readFile).map(AWSConfigFile.init(parsing:))
        let configFile = configPath.flatMap(readFile).map(AWSConfigFile.init(parsing:))
        let configSection = configFile.flatMap { file in
            profile == "default" ? file.section("default") ?? file.section("profile default") : file.section("profile " + profile)
        }
        let region = try self.region(explicitRegion, configSection: configSection, configPath: configPath)

        if explicitProfile == nil, let key = value("AWS_ACCESS_KEY_ID"), let secret = value("AWS_SECRET_ACCESS_KEY") {
            let credentials = AWSCredentials(accessKeyId: key, secretAccessKey: secret, sessionToken: value("AWS_SESSION_TOKEN"))
            try Self.check(credentials, origin: "the environment (AWS_ACCESS_KEY_ID)")
            return Resolution(credentials: credentials, region: region, profile: profile,
                              origin: "the environment (AWS_ACCESS_KEY_ID)")
        }
        var looked: [String] = []
        for (path, section) in [(credentialsPath, credentialsFile?.section(profile)), (configPath, configSection)] {
            guard let path else { continue }
            looked.append(path)
            guard let section else { continue }
            let origin = "profile '\(profile)' in \(path)"
            let key = section["aws_access_key_id"].flatMap(Self.nonEmpty)
            let secret = section["aws_secret_access_key"].flatMap(Self.nonEmpty)
            if key == nil, secret == nil { continue }  // (a config profile with only a region)
            guard let key else { throw AWSCredentialError(profile: profile, looked: looked, .incomplete(origin, missing: "aws_access_key_id")) }
            guard let secret else {
                throw AWSCredentialError(profile: profile, looked: looked, .incomplete(origin, missing: "aws_secret_access_key"))
            }
            let credentials = AWSCredentials(accessKeyId: key, secretAccessKey: secret,
                                             sessionToken: section["aws_session_token"].flatMap(Self.nonEmpty))
            try Self.check(credentials, origin: origin)
            return Resolution(credentials: credentials, region: region, profile: profile, origin: origin)
        }
        let profileExists = credentialsFile?.section(profile) != nil || configSection != nil
        if profile != "default" || explicitProfile != nil, !profileExists {
            throw AWSCredentialError(profile: profile, looked: looked, .noSuchProfile)
        }
        throw AWSCredentialError(profile: profile, looked: looked, .noCredentials)
    }

    private func region(_ explicit: String?, configSection: [String: String]?, configPath: String?) throws(AWSCredentialError) -> String {
        let candidates: [(String?, String)] = [
            (explicit, "the region given"), (value("AWS_REGION"), "AWS_REGION"), (value("AWS_DEFAULT_REGION"), "AWS_DEFAULT_REGION"),
            (configSection?["region"].flatMap(Self.nonEmpty), "region in \(configPath ?? "the config file")"),
        ]
        guard let (region, origin) = candidates.first(where: { $0.0 != nil }).map({ ($0.0!, $0.1) }) else {
            return Self.defaultRegion
        }
        do {
            try S3Endpoint.check(region: region)
        } catch {
            throw AWSCredentialError(profile: "", looked: [], .invalidRegion(region, origin: origin))
        }
        return region
    }

    /// No control character may reach a header or libcurl (a newline in a token would start
    /// a header of its own).
    private static func check(_ credentials: AWSCredentials, origin: String) throws(AWSCredentialError) {
        let fields = [("access key id", credentials.accessKeyId), ("secret access key", credentials.secretAccessKey),
                      ("session token", credentials.sessionToken ?? "")]
        for (name, value) in fields where value.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw AWSCredentialError(profile: "", looked: [], .controlCharacters(name, origin: origin))
        }
    }

    /// A set, non-empty environment variable (the AWS CLI ignores empty ones).
    private func value(_ name: String) -> String? { environment[name].flatMap(Self.nonEmpty) }

    private static func nonEmpty(_ text: String) -> String? { text.isEmpty ? nil : text }

    /// The largest credentials or config file read (they are a few hundred bytes).
    public static let maximumFileBytes = 1 << 20

    /// The file's text, or nil when it is missing, unreadable or larger than `maximumFileBytes`.
    @Sendable public static func readTextFile(_ path: String) -> String? {
        let fd = RawPath.withCString(path) { open($0, O_RDONLY | O_CLOEXEC) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes += buffer[..<count]
            if bytes.count > maximumFileBytes { return nil }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// No credentials (or region) could be found: the job cannot be signed. Names the profile
/// and where it looked; never holds a secret. Thread: a value; any.
public struct AWSCredentialError: Error, Equatable, Sendable {
    public enum Reason: Equatable, Sendable {
        /// The profile asked for (explicitly or by `AWS_PROFILE`) is in neither file.
        case noSuchProfile
        /// No keys in the environment nor for the profile.
        case noCredentials
        /// The profile at this origin has one of the two keys but not `missing`.
        case incomplete(String, missing: String)
        /// The named field from this origin holds a control character.
        case controlCharacters(String, origin: String)
        case invalidRegion(String, origin: String)
    }

    public var profile: String
    /// The files looked in, in order.
    public var looked: [String]
    public var reason: Reason

    init(profile: String, looked: [String], _ reason: Reason) {
        self.profile = profile
        self.looked = looked
        self.reason = reason
    }

    /// One line a user can act on.
    public var message: String {
        let files = looked.isEmpty ? "no credentials file ($HOME is not set)" : looked.joined(separator: " and ")
        return switch reason {
        case .noSuchProfile: "AWS profile '\(profile)' not found in \(files)"
        case .noCredentials:
            "no AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not both set, and profile '\(profile)' "
                + "has no aws_access_key_id in \(files)"
        case .incomplete(let origin, let missing): "\(origin) has no \(missing)"
        case .controlCharacters(let field, let origin): "the AWS \(field) from \(origin) holds a control character"
        case .invalidRegion(let region, let origin):
            "AWS region '\(region)' (from \(origin)) must be letters, digits and hyphens (e.g. us-east-1)"
        }
    }
}
