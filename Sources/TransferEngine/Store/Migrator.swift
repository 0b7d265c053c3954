/// Applies embedded migrations once each, in order, each in its own transaction, and
/// refuses a database written by a newer transferd.
struct Migrator {
    var migrations: [Migration]

    init(migrations: [Migration] = embeddedMigrations) {
        self.migrations = migrations.sorted { $0.version < $1.version }
    }

    var latestVersion: Int { migrations.last?.version ?? 0 }

    /// The versions applied by this call.
    @discardableResult
    func migrate(_ connection: SQLiteConnection) throws -> [Int] {
        try connection.execute("""
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version    INTEGER PRIMARY KEY,
                name       TEXT    NOT NULL,
                applied_at INTEGER NOT NULL
            )
            """)
        let applied = Set(try connection.query("SELECT version FROM schema_migrations") { $0.int() })
        if let newest = applied.max(), newest > latestVersion {
            throw StoreError.databaseFromFuture(version: newest, supported: latestVersion)
        }
        var done: [Int] = []
        for migration in migrations where !applied.contains(migration.version) {
            try connection.transaction {
                try connection.execute(migration.sql)
                try connection.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                                   migration.version, migration.name, Timestamp.now.rawValue)
            }
            done.append(migration.version)
        }
        return done
    }
}
