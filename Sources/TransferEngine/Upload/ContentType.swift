/// Guesses a file's media type from its extension, as browsers and curl do for uploads.
public enum ContentType {
    public static let fallback = "application/octet-stream"

    private static let byExtension: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "md": "text/markdown",
        "csv": "text/csv", "html": "text/html", "htm": "text/html", "css": "text/css",
        "js": "text/javascript", "xml": "application/xml", "json": "application/json",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "tgz": "application/gzip", "tar": "application/x-tar", "bz2": "application/x-bzip2",
        "xz": "application/x-xz", "7z": "application/x-7z-compressed", "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp",
        "svg": "image/svg+xml", "mp3": "audio/mpeg", "wav": "audio/wav", "mp4": "video/mp4",
        "webm": "video/webm", "mov": "video/quicktime", "iso": "application/x-iso9660-image",
    ]

    public static func guess(forFilename filename: String) -> String {
        guard let dot = filename.lastIndex(of: "."), dot != filename.startIndex else { return fallback }
        return byExtension[filename[filename.index(after: dot)...].lowercased()] ?? fallback
    }
}
