package control

// Messages of the control API; tests, goldens and the OpenAPI examples
// quote them byte for byte.
const (
	// Clock.
	MsgAdvanceOneOf   = "give either seconds or next_due, not both"
	MsgNothingDue     = "Nothing is due: no project, video or artifact has a pending transition"
	msgAdvanceMissing = "seconds or next_due is required"
	msgTimeScale      = "time_scale must be between 0 and 1000000; got %v"
	msgAdvanceSeconds = "seconds must be between 0 and %d; got %v"
	msgPastMaxTime    = "simulated time cannot go past %s (ISO 8601 timestamps need four-digit years); the clock is at %s"

	// Accounts: storage credentials, rate limit, balance.
	msgAccessKeyID       = "storage.access_key_id must be a non-empty string of at most 128 characters"
	msgStorageTooLong    = "storage.secret_access_key (at most 256 characters) or storage.region (at most 64) is too long"
	msgBucketCount       = "storage.buckets must list at most 100 buckets; got %d"
	msgBucketName        = "storage.buckets[%d] must be a bucket name (1 to 63 characters, no '/' or space); got %q"
	msgRateLimit         = "rate_limit.per_minute and rate_limit.per_day must be between 0 (no limit) and 1000000000"
	msgBalanceMinutes    = "balance_minutes must be a whole number of minutes between 0 and 1e12; got %v"
	msgStudioChangeEmpty = "Send storage and/or rate_limit (null removes them)"

	// Forced artifact outcomes.
	msgArtifactSize     = "size must be between 0 and %d bytes"
	msgArtifactDuration = "duration_seconds must be between 0 and %v"

	// State and fixtures.
	msgStateLimit    = "limit must be a positive integer; got %q"
	msgFixturesEmpty = "send at least one of accounts, options, voices, media_rules, studio, or from_startup: true"
)
