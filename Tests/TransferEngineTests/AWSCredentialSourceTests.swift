import Foundation
import Testing
@testable import TransferEngine

@Suite struct AWSCredentialSourceTests {
    static let credentialsFile = """
        # the AWS CLI's shared credentials file
        [default]
        aws_access_key_id = AKIADEFAULT
        aws_secret_access_key = defaultSecret/+x
        ; a comment
        [work]
          aws_access_key_id=AKIAWORK
        AWS_Secret_Access_Key =   workSecret  \r
        aws_session_token = FwoGZXIvYXdzEJr//token==
        [half]
        aws_access_key_id = AKIAHALF
        [empty]
        """

    static let configFile = """
        [default]
        region = eu-central-1
        [profile work]
        region = ap-south-1
        s3 =
          region = not-this-one
        [profile confonly]
        aws_access_key_id = AKIACONF
        aws_secret_access_key = confSecret
        [profile bad]
        region = eu west
        """

    /// A source reading the two files from a temporary $HOME.
    static func source(_ environment: [String: String] = [:], credentials: String? = credentialsFile,
                       config: String? = configFile, in directory: TemporaryDirectory) throws -> AWSCredentialSource {
        try FileManager.default.createDirectory(atPath: directory.file(".aws"), withIntermediateDirectories: true)
        if let credentials { try credentials.write(toFile: directory.file(".aws/credentials"), atomically: true, encoding: .utf8) }
        if let config { try config.write(toFile: directory.file(".aws/config"), atomically: true, encoding: .utf8) }
        return AWSCredentialSource(environment: ["HOME": directory.path].merging(environment) { $1 })
    }

    @Test func theEnvironmentComesFirst() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "envSecret",
                                      "AWS_SESSION_TOKEN": "envToken", "AWS_REGION": "us-west-2"], in: directory)
        let found = try source.resolve()
        #expect(found.credentials == AWSCredentials(accessKeyId: "AKIAENV", secretAccessKey: "envSecret", sessionToken: "envToken"))
        #expect(found.region == "us-west-2")
        #expect(found.origin == "the environment (AWS_ACCESS_KEY_ID)")
    }

    @Test func aKeyWithoutItsSecretInTheEnvironmentIsIgnored() throws {
        let directory = TemporaryDirectory()
        let found = try Self.source(["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": ""], in: directory).resolve()
        #expect(found.credentials.accessKeyId == "AKIADEFAULT")
        #expect(found.credentials.secretAccessKey == "defaultSecret/+x")
        #expect(found.credentials.sessionToken == nil)
        #expect(found.region == "eu-central-1", "[default] in the config file")
        #expect(found.origin == "profile 'default' in \(directory.path)/.aws/credentials")
    }

    @Test func anExplicitProfileOutweighsTheEnvironmentsKeysButAWSProfileDoesNot() throws {
        let directory = TemporaryDirectory()
        let environment = ["AWS_ACCESS_KEY_ID": "AKIAENV", "AWS_SECRET_ACCESS_KEY": "envSecret"]
        let explicit = try Self.source(environment, in: directory).resolve(profile: "work")
        #expect(explicit.credentials == AWSCredentials(accessKeyId: "AKIAWORK", secretAccessKey: "workSecret",
                                                       sessionToken: "FwoGZXIvYXdzEJr//token=="))
        #expect(explicit.region == "ap-south-1", "[profile work]; the nested s3 region is not the profile's")
        let byVariable = try Self.source(environment.merging(["AWS_PROFILE": "work"]) { $1 }, in: directory).resolve()
        #expect(byVariable.credentials.accessKeyId == "AKIAENV")
        #expect(byVariable.profile == "work")
        #expect(byVariable.region == "ap-south-1")
    }

    @Test func aProfileMayKeepItsKeysInTheConfigFile() throws {
        let directory = TemporaryDirectory()
        let found = try Self.source(in: directory).resolve(profile: "confonly")
        #expect(found.credentials == AWSCredentials(accessKeyId: "AKIACONF", secretAccessKey: "confSecret"))
        #expect(found.region == "us-east-1", "no region anywhere")
        #expect(found.origin == "profile 'confonly' in \(directory.path)/.aws/config")
    }

    @Test func regionsInOrder() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(["AWS_REGION": "r-env", "AWS_DEFAULT_REGION": "r-default"], in: directory)
        #expect(try source.resolve(region: "r-arg").region == "r-arg")
        #expect(try source.resolve().region == "r-env")
        #expect(try Self.source(["AWS_DEFAULT_REGION": "r-default"], in: directory).resolve().region == "r-default")
        let plain = try Self.source(in: directory)
        do {
            _ = try plain.resolve(profile: "bad")
            Issue.record("a region with a space was accepted")
        } catch {
            #expect(error.message == "AWS region 'eu west' (from region in \(directory.path)/.aws/config) must be letters, digits and hyphens (e.g. us-east-1)")
        }
    }

    @Test func filesNamedByTheEnvironment() throws {
        let directory = TemporaryDirectory()
        try "[p]\naws_access_key_id=AKIAX\naws_secret_access_key=s\n".write(toFile: directory.file("creds"), atomically: true, encoding: .utf8)
        try "[profile p]\nregion=sa-east-1\n".write(toFile: directory.file("conf"), atomically: true, encoding: .utf8)
        let source = AWSCredentialSource(environment: ["AWS_SHARED_CREDENTIALS_FILE": directory.file("creds"),
                                                       "AWS_CONFIG_FILE": directory.file("conf"), "AWS_PROFILE": "p"])
        let found = try source.resolve()
        #expect(found.credentials.accessKeyId == "AKIAX")
        #expect(found.region == "sa-east-1")
    }

    @Test func aMissingProfileNamesWhereItLooked() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(in: directory)
        do {
            _ = try source.resolve(profile: "nope")
            Issue.record("a missing profile was found")
        } catch {
            #expect(error.reason == .noSuchProfile)
            #expect(error.message == "AWS profile 'nope' not found in \(directory.path)/.aws/credentials and \(directory.path)/.aws/config")
        }
    }

    @Test func missingCredentialsNameWhereItLookedAndNoSecret() throws {
        let directory = TemporaryDirectory()
        let empty = try Self.source(credentials: nil, config: nil, in: directory)
        do {
            _ = try empty.resolve()
            Issue.record("credentials from nowhere")
        } catch {
            #expect(error.reason == .noCredentials)
            #expect(error.message.contains("\(directory.path)/.aws/credentials"))
        }
        let full = try Self.source(in: directory)
        do {
            _ = try full.resolve(profile: "half")
            Issue.record("a profile without its secret was used")
        } catch {
            #expect(error.message == "profile 'half' in \(directory.path)/.aws/credentials has no aws_secret_access_key")
        }
        do {
            _ = try AWSCredentialSource(environment: [:]).resolve()
        } catch {
            #expect(error.message.contains("$HOME is not set"), "\(error.message)")
        }
    }

    @Test func aTokenWithANewlineIsRefusedWithoutShowingIt() throws {
        let directory = TemporaryDirectory()
        let source = try Self.source(["AWS_ACCESS_KEY_ID": "AKIA", "AWS_SECRET_ACCESS_KEY": "s3cret",
                                      "AWS_SESSION_TOKEN": "tok\r\nX-Evil: 1"], in: directory)
        do {
            _ = try source.resolve()
            Issue.record("a header injection was accepted")
        } catch {
            #expect(error.message == "the AWS session token from the environment (AWS_ACCESS_KEY_ID) holds a control character")
            #expect(!error.message.contains("X-Evil"))
        }
    }

    @Test func credentialsNeverPrintTheirSecrets() {
        let credentials = AWSCredentials(accessKeyId: "AKIAID", secretAccessKey: "s3cretKey", sessionToken: "t0ken")
        var dumped = ""
        dump(credentials, to: &dumped)
        struct Holder { var credentials: AWSCredentials }
        for text in [credentials.description, credentials.debugDescription, "\(credentials)", String(reflecting: credentials),
                     dumped, "\(Holder(credentials: credentials))", "\([credentials])"] {
            #expect(!text.contains("s3cretKey") && !text.contains("t0ken"), "\(text)")
            #expect(text.contains("AKIAID"))
        }
    }

    @Test func theConfigParserReadsWhatTheAWSCLIWrites() {
        let file = AWSConfigFile(parsing: "\u{FEFF}[a]\nk1 = v=1\nk2: v:2\r\n[ b ]\n# x = y\nK3 = \n\n[a]\nk1 = later\nno delimiter\n")
        #expect(file.section("a") == ["k1": "later", "k2": "v:2"])
        #expect(file.section("b") == ["k3": ""])
        #expect(file.section("c") == nil)
    }

    @Test func readTextFileIsBounded() throws {
        let directory = TemporaryDirectory()
        #expect(AWSCredentialSource.readTextFile(directory.file("missing")) == nil)
        try "[x]\n".write(toFile: directory.file("small"), atomically: true, encoding: .utf8)
        #expect(AWSCredentialSource.readTextFile(directory.file("small")) == "[x]\n")
        try Data(count: AWSCredentialSource.maximumFileBytes + 1).write(to: URL(fileURLWithPath: directory.file("big")))
        #expect(AWSCredentialSource.readTextFile(directory.file("big")) == nil)
    }
}
