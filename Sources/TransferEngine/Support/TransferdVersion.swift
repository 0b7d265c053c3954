/// The version printed by `transferd --version`, `stats` and the User-Agent.
public enum TransferdVersion {
    public static let current = "0.1.0"
}
