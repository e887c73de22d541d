package sim

import (
	"errors"
	"fmt"
)

// QuotaError means a file would take the stored bytes past a quota; Reason
// says which, in words the client may see.
type QuotaError struct{ Reason string }

func (e *QuotaError) Error() string { return "storage quota exceeded: " + e.Reason }

// Code is a transport-neutral error code, which each API maps to its own
// HTTP status and envelope.
type Code string

// The codes, from the client's fault to the simulator's.
const (
	CodeValidation      Code = "validation"       // the request breaks a documented rule
	CodeUnauthorized    Code = "unauthorized"     // missing or unknown API key
	CodePaymentRequired Code = "payment_required" // balance or plan limit
	CodeForbidden       Code = "forbidden"        // feature not enabled for the account
	CodeAccessDenied    Code = "access_denied"    // like forbidden, with an error-only body (voice cloning)
	CodeNotFound        Code = "not_found"        // unknown resource, or another account's
	CodeVideoInfo       Code = "video_info"       // the source video cannot be read
	CodeConflict        Code = "conflict"         // a request with this idempotency key is in flight
	CodeIdempotency     Code = "idempotency"      // idempotency key reused with another request
	CodeTooLarge        Code = "too_large"        // request body over the limit
	CodeRateLimited     Code = "rate_limited"     // over the key's request rate limit
	CodeMethod          Code = "method"           // method not allowed on the route
	CodeRoute           Code = "route"            // no such route
	CodeInternal        Code = "internal"         // a bug or an I/O failure; message masked
	CodeLimit           Code = "limit"            // a limit of the simulator itself (the number of sandboxes)
)

// Error is the domain error every layer returns; APIs render it.
type Error struct {
	Code    Code
	Message string
	// Detail says more than a documented Message that must stay byte for
	// byte; the APIs send it in a response header.
	Detail string
}

func (e *Error) Error() string { return e.Message }

// WithDetail sets the detail of e and returns e.
func (e *Error) WithDetail(format string, args ...any) *Error {
	e.Detail = fmt.Sprintf(format, args...)
	return e
}

// Errorf builds an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err, CodeInternal for foreign errors and ""
// for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Code
	}
	return CodeInternal
}

// ErrorMessage returns the message of a domain error, or "" for foreign errors.
func ErrorMessage(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Message
	}
	return ""
}

// ErrorDetail returns the detail of a domain error, or "".
func ErrorDetail(err error) string {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Detail
	}
	return ""
}

// ErrNotFound is returned by stores for a missing record.
var ErrNotFound = errors.New("sim: record not found")

// ErrDamaged is wrapped by a store's errors for a record it cannot read back.
var ErrDamaged = errors.New("sim: damaged record")

// Messages that clients and tests match on. The first group is quoted from
// the provider's public documentation; keep those byte for byte.
const (
	MsgInvalidAPIKey        = "Invalid API key"
	MsgInsufficientBalance  = "Insufficient balance for this project"
	MsgProjectNotFound      = "Project not found"
	MsgDeleteInProgress     = "Cannot delete project while processing is in progress"
	MsgUnknownVoice         = "Unknown voice %s"
	MsgSpeakerNotInSpeakers = "Speaker ID %d referenced in script but not found in target_speakers"
	MsgInvalidTiming        = "Invalid timing: start_ms must be less than end_ms"
	// DetailInvalidTiming is the X-Dubsim-Error-Detail of MsgInvalidTiming.
	DetailInvalidTiming = "%s: start_ms %d, end_ms %d"
	MsgRequired         = "%s is required"

	MsgRetranslationNotReady  = "Project %s cannot be re-translated while its status is %s; re-translation needs status ready"
	MsgRetranslationDisabled  = "Re-translation is not enabled for this account; contact support@dubformer.ai to enable it"
	MsgSoundalikeSubscription = "Soundalike voices require an active subscription"
	MsgEmotionalSubscription  = "Emotional transfer voices require an active subscription"
	MsgHigherTier             = "%s requires a Pro subscription or higher"
	MsgScriptAndContent       = "source_script cannot be combined with source_script_content"
	MsgEmotionalLanguage      = "use_emotional_transfer supports only English, Spanish, French, German, Italian and Portuguese targets; got %s"
	MsgSoundalikeLanguage     = "use_soundalike_voices is not supported for target language %s"
	MsgVoiceLanguage          = "Voice %s does not support the project's target language %s"
	MsgSpecialVoiceLanguage   = "Voice %s is not supported for target language %s"
	MsgDuplicateSpeaker       = "Duplicate speaker ID %d in target_speakers"
	MsgOverlap                = "Overlapping segments: target_script[%d] (%d-%d ms) overlaps target_script[%d] (%d-%d ms)"
	MsgEmptyText              = "%s.text must not be empty"
	MsgContentType            = "Content-Type must be application/json for a request with a JSON body"
	MsgMalformedJSON          = "Malformed JSON body: %s"
	MsgBodyNotObject          = "Request body must be a JSON object"
	MsgBodyTooLarge           = "Request body exceeds the limit of %d bytes"
	MsgUnknownField           = "Unknown field %s"
	MsgWrongType              = "%s must be %s; got %s" // field, expected type, JSON kind received
	MsgIdempotencyMismatch    = "Idempotency-Key %q was already used with a different request (method, path or body); use a new key"
	MsgIdempotencyInFlight    = "A request with Idempotency-Key %q is still being processed; retry after it completes"
	MsgInternal               = "Internal error; see the dubsim log"
	MsgVideoUnreadable        = "Unable to read video info from %s: %s"

	MsgCloningDisabled  = "Voice cloning API is not enabled for your account. Please contact your sales manager to enable it."
	MsgCloningPlan      = "Voice cloning requires a PRO subscription or higher. Please contact your sales manager to upgrade your plan."
	MsgCloningMultipart = "This endpoint takes multipart/form-data with the fields text, language and one or more reference_audio_files; got Content-Type %q"
)

// Messages of the use cases, dubsim's own wording. Tests, golden files and
// the OpenAPI examples quote them byte for byte.
const (
	// Accounts (POST /_sim/accounts and the account store).
	MsgPlan            = "plan must be one of none, subscription, pro, enterprise; got %q"
	MsgNegativeBalance = "balance_minutes must not be negative"
	MsgCompanyIDLength = "company_id must be at most 64 characters; got %d"
	MsgUserEmail       = "user_email must be an email address of at most 254 characters; got %q"
	MsgUserIDChosen    = "user_id cannot be chosen; use company_id to join a company, and user_email to name the new user"
	MsgAccountExists   = "An account with api_key %q already exists"
	MsgSandboxKey      = "api_key %q starts with sbx_, the prefix of sandbox keys; choose another key (in a sandbox, a key given without the prefix gets the sandbox's own)"
	MsgUnknownUser     = "user_id %q does not name a user"
	MsgUnknownCompany  = "company_id %q does not name a company"
	MsgEmailTaken      = "user_email %q is already taken"
	MsgAccountNotFound = "No account with api_key %q"

	// Dubbing projects (platform interface).
	MsgScriptContent = "source_script_content %v"
	MsgScriptPastEnd = "source_script[%d] ends at %d ms, after the end of the source video (%d ms)"
	MsgCuePastEnd    = "source_script_content cue %d ends at %d ms, after the end of the source video (%d ms)"
	MsgSourceTooLong = "The source video lasts %s; videos up to %s are accepted"

	// Re-translation of a dubbing project (platform interface).
	MsgOneOf         = "%s must be one of %s; got %q" // field, allowed values, value
	MsgNoSegments    = "target_script must contain at least one segment"
	MsgNoSpeakers    = "target_speakers must contain at least one speaker"
	MsgSpeakerStyle  = "%s.style must be one of masculine, feminine; got %q"
	MsgNegativeStart = "%s.start_ms must not be negative; got %d"

	// Studio projects.
	MsgStudioProjectNotFound = "Studio project %s not found"
	MsgManagerUnknown        = "managerEmail: no user with email %s"
	MsgManagerOtherCompany   = "managerEmail: %s does not belong to your company; the manager must be a user of the same company as the API key's user"
	MsgGlossaryMissing       = "%s: glossary %s does not exist"
	MsgGlossaryOtherOrg      = "%s: glossary %s does not belong to your organization"
	MsgGlossaryKind          = "%s: glossary %s is a %s glossary; this field takes a %s glossary"

	// Artifacts. The first four check an artifact given as a video's input.
	MsgArtifactMissing      = "%s: artifact %s does not exist"
	MsgArtifactOtherCompany = "%s: artifact %s does not belong to your company"
	MsgArtifactType         = "%s: artifact %s is of type %s; this field takes an artifact of type %s"
	MsgArtifactNotUsable    = "%s: artifact %s has status %s%s; an artifact is usable only when its status is upload_completed"
	MsgArtifactNotFound     = "Artifact %s not found"
	MsgArtifactFinished     = "Artifact %s has already finished processing (status %s)"

	// Videos.
	MsgMultiDisabled    = "sourceLanguage: multi is not enabled for your organization; an administrator enables it through your account manager"
	MsgGuidanceLanguage = "translationGuidance.byLang: %s is not a target language of the video (%s)"
	MsgGuidanceStale    = "dstLangs: the video's translationGuidance.byLang has entries for %s, which would no longer be target languages; send translationGuidance in the same request (or null to remove it)"
	MsgVideoStatus      = "status must be one of %s; got %q"
	MsgVideoNotFound    = "Video %s not found"

	// Forced outcomes (POST /_sim/outcomes and the outcome rules).
	MsgOutcome              = "outcome must be %q or %q; got %q"
	MsgOutcomeNotInProgress = "Project %s is %s, not in_progress: a forced outcome applies to a run that is still processing (re-translate it first)"
	MsgOutcomeCount         = "count must be at least 1; got %d"
	MsgOutcomeResource      = "resource must be %q or %q; got %q"
	MsgOutcomeErrorMessage  = "error_message applies only to outcome %q"
	MsgOutcomeAPIKey        = "api_key %q is not an account"
	MsgOutcomeRuleNotFound  = "No outcome rule %q"
	MsgOutcomeRules         = "This simulator holds %d outcome rules, the most it keeps; remove some (DELETE /_sim/outcomes/{id})"
	MsgOutcomeRuleBytes     = "The outcome rules would hold %d bytes with this one, past the %d this simulator keeps; remove some (DELETE /_sim/outcomes/{id})"
)
