#if canImport(Glibc)
import Glibc
#endif

/// What an S3 job's attempt needs to reach its object: the object, the endpoint and the
/// signing credentials, resolved at each attempt on a file thread (never on the loop thread:
/// it reads `~/.aws/credentials`) from the daemon's environment and files. Only the profile and
/// region the job names are stored; the secret lives in memory for the attempt. Thread: a value; any.
struct S3Access: Sendable {
    var location: S3Location
    var endpoint: S3Endpoint
    var signing: AWSSigning

    /// The access of `job`, whose `remote` is S3; the daemon's environment by default.
    init(_ job: Job, environment: [String: String] = S3Access.daemonEnvironment) throws(TransferError) {
        let remote = job.remote ?? RemoteOptions(kind: .s3)
        do {
            location = try S3Location(parsing: job.url)
        } catch {
            throw .request(error.message)
        }
        let resolution: AWSCredentialSource.Resolution
        do {
            resolution = try AWSCredentialSource(environment: environment).resolve(profile: remote.profile, region: remote.region)
        } catch {
            throw .credentials(error.message)
        }
        do {
            endpoint = try S3Endpoint(url: remote.endpoint, region: resolution.region)
            signing = try AWSSigning(region: resolution.region, credentials: resolution.credentials)
        } catch {
            throw .request(error.message)
        }
    }

    /// The variables credentials and regions are read from: the daemon's own, read once (the
    /// files they name are read at every attempt).
    static let daemonEnvironment: [String: String] = {
        var environment: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "="), text.hasPrefix("AWS_") || text.hasPrefix("HOME=") {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        return environment
    }()
}
