extension Job.Fields {
    /// The URL its requests go to: the job's own, or for an S3 job its object's at the endpoint
    /// (AWS itself when none is named): what per-host limits and offline probes count by.
    public var serverURL: String {
        guard remote?.kind == .s3, let location = try? S3Location(parsing: url) else { return url }
        let region = remote?.region ?? AWSCredentialSource.defaultRegion
        guard let endpoint = try? S3Endpoint(url: remote?.endpoint, region: region) else { return url }
        return location.objectURL(endpoint)
    }
}
