/// What a download does when its destination already exists: refuse (`fail`, the default),
/// replace a regular file (`overwrite`, as `--overwrite`), or take the next free name
/// `name (1).ext` (`rename`).
public enum OnExists: String, Codable, Sendable, CaseIterable {
    case fail, overwrite, rename
}
