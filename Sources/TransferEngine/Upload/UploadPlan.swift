/// Turns an upload request into what the job will send, fixed at queue time: files resolved
/// and snapshotted (size + mtime), content types chosen, a boundary drawn.
enum UploadPlan {
    static let methods: Set<String> = ["POST", "PUT"]

    /// The upload's spec, method and exact body length.
    static func resolve(_ job: NewJob, refusingLinks: Bool = false) throws(JobRefusal) -> (spec: UploadSpec, method: String, length: Int64) {
        if let form = job.form, !form.isEmpty {
            guard job.path == nil else {
                throw JobRefusal.invalid("give either form parts (-F) or one file (-T), not both")
            }
            let method = try method(job.method, default: "POST")
            var parts: [FormPart] = []
            for field in form {
                parts.append(try resolve(field, refusingLinks: refusingLinks))
            }
            let texts = parts.flatMap { part -> [String] in
                switch part {
                case .field(let name, let value): [name, value]
                case .file(let name, _, let filename, _): [name, filename]
                }
            }
            let boundary = Boundary.make(avoiding: texts)
            let length = MultipartBody(form: parts, boundary: boundary).contentLength
            guard NumericLimits.bytes.contains(length) else {
                throw JobRefusal.invalid("the form's files add up to more than \(NumericLimits.bytes.range.upperBound) bytes")
            }
            return (UploadSpec(boundary: boundary, form: parts), method, length)
        }
        guard let path = job.path else {
            throw JobRefusal.invalid("an upload needs form parts (-F) or a file (-T FILE)")
        }
        guard path.hasPrefix("/") else {
            throw JobRefusal.invalid("the file to upload must be an absolute path: \(path)")
        }
        let source = try snapshot(path, refusingLinks: refusingLinks)
        // A tus upload PATCHes its file; an S3 one PUTs it (whole, or in parts).
        if let remote = job.remote { return (UploadSpec(raw: source), remote.kind == .tus ? "PATCH" : "PUT", source.size) }
        return (UploadSpec(raw: source), try method(job.method, default: "PUT"), source.size)
    }

    private static func method(_ requested: String?, default fallback: String) throws(JobRefusal) -> String {
        let method = requested?.uppercased() ?? fallback
        guard methods.contains(method) else {
            throw JobRefusal.invalid("--method must be POST or PUT, got '\(requested ?? "")'")
        }
        return method
    }

    private static func resolve(_ field: FormField, refusingLinks: Bool) throws(JobRefusal) -> FormPart {
        guard !field.name.isEmpty else { throw JobRefusal.invalid("a form part needs a name") }
        guard let path = field.file else {
            return .field(name: field.name, value: field.value ?? "")
        }
        guard path.hasPrefix("/") else {
            throw JobRefusal.invalid("the file of form part '\(field.name)' must be an absolute path: \(path)")
        }
        let source = try snapshot(path, refusingLinks: refusingLinks)
        let filename = field.filename ?? String(path.split(separator: "/").last ?? "file")
        let contentType = field.contentType ?? ContentType.guess(forFilename: filename)
        guard !contentType.utf8.contains(where: { $0 == 10 || $0 == 13 }) else {
            throw JobRefusal.invalid("the content type of form part '\(field.name)' contains a line break")
        }
        return .file(name: field.name, source: source, filename: filename, contentType: contentType)
    }

    private static func snapshot(_ path: String, refusingLinks: Bool) throws(JobRefusal) -> SourceFile {
        switch SourceFile.snapshot(path, refusingLinks: refusingLinks) {
        case .success(let source): return source
        case .failure(let error): throw JobRefusal.invalid(error.message)
        }
    }
}
