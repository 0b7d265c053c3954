/// One numbered schema change from Migrations/NNNN_name.sql, embedded at build time.
struct Migration: Sendable {
    var version: Int
    var name: String
    var sql: String
}
