// Placeholder until the S3 building blocks land (CurlEasy.Request.awsSigning).
struct AWSSigning: Sendable {}
